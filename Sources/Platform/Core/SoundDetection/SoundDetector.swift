/// Streaming noise detector for the baby monitor: measures the level of every 20 ms frame and reports a
/// ``NoiseDetection`` when the level stays at or above the threshold long enough, at most once per cooldown.
///
/// Pipeline: input (16 kHz, or 48 kHz through ``Downsampler48kTo16k``) → 320-sample frames at 16 kHz →
/// RMS → level 0...100 (``SoundLevel``) → loud-streak / cooldown logic.
///
/// The detector is pure: no clocks, threads or I/O. All times are derived from the number of samples
/// processed, as millisecond offsets since the first sample (``NoiseDetection/offsetMs``). Chunks may have any
/// size; a frame that straddles two chunks is completed by the second one, and the result is identical for
/// every way of chunking the same stream.
///
/// Detection rules (per frame `f` with level `L`):
/// - `L >= threshold` extends the loud streak, otherwise the streak ends.
/// - When the streak reaches `minDurationMs` (rounded up to whole frames) and the last event is at least
///   `cooldownSeconds` of audio ago, an event fires at the end of frame `f`, carrying the streak's peak level.
/// - The streak keeps counting through the cooldown and after an event. So a continuous cry fires once at
///   `minDurationMs`, then every `cooldownSeconds`; a loud streak that began during the cooldown and is already
///   long enough fires on the first frame after the cooldown. A streak that ends during the cooldown is lost.
///
/// Changing ``configuration`` keeps the streak, its peak and the time of the last event; the new values apply
/// from the next frame.
public struct SoundDetector: Sendable {
    /// Sample rate of the analysis, in hertz.
    public static let analysisSampleRate = 16_000
    /// Samples per analysis frame (20 ms at 16 kHz).
    public static let frameSize = 320
    /// Duration of one analysis frame in milliseconds.
    public static let frameDurationMs = 20
    /// Input sample rates accepted by ``init(configuration:inputSampleRate:)``.
    public static let supportedInputSampleRates = [16_000, 48_000]

    /// Detection parameters. Setting it keeps the current streak and cooldown; out-of-range values
    /// (possible because the fields are settable) are clamped into range.
    public var configuration: SoundDetectorConfiguration {
        didSet { gate.apply(configuration) }
    }
    /// Sample rate of the input passed to `process`, 16 000 or 48 000.
    public let inputSampleRate: Int
    /// Level (0...100) of the most recently completed frame; 0 before the first frame. For a live meter.
    public private(set) var currentLevel = 0
    /// Number of 20 ms frames completed since the stream start (or the last ``reset()``).
    public private(set) var framesProcessed: Int64 = 0

    private var gate: NoiseEventGate
    private var downsampler = Downsampler48kTo16k()
    /// Partial frame carried between chunks.
    private var frame: ContiguousArray<Float>
    private var frameFill = 0
    /// Reused 16 kHz output of the downsampler.
    private var downsampled: [Float] = []
    /// Reused Int16 → Float conversion buffer.
    private var converted: ContiguousArray<Float> = []

    /// 48 kHz input is downsampled in blocks of this many samples, bounding the scratch buffer.
    private static let decimationBlock = 4_800
    /// Int16 input is converted in blocks of this many samples.
    private static let conversionBlock = 4_096

    /// Creates a detector at the start of a stream.
    ///
    /// - Parameters:
    ///   - configuration: Detection parameters (already validated by their initializer).
    ///   - inputSampleRate: Sample rate of the samples that will be passed to `process`: 16 000 or 48 000.
    /// - Throws: ``SoundDetectorError/unsupportedInputSampleRate(_:)`` for any other rate.
    public init(
        configuration: SoundDetectorConfiguration = .default,
        inputSampleRate: Int
    ) throws(SoundDetectorError) {
        guard Self.supportedInputSampleRates.contains(inputSampleRate) else {
            throw .unsupportedInputSampleRate(inputSampleRate)
        }
        self.configuration = configuration
        self.inputSampleRate = inputSampleRate
        gate = NoiseEventGate(configuration: configuration)
        frame = ContiguousArray(repeating: 0, count: Self.frameSize)
    }

    /// Audio time covered by the completed frames, in milliseconds since the stream start.
    public var processedDurationMs: Int64 {
        framesProcessed * Int64(Self.frameDurationMs)
    }

    /// Length of the current loud streak in milliseconds (0 if the last frame was below the threshold).
    public var loudStreakMs: Int {
        gate.loudFrames * Self.frameDurationMs
    }

    /// Whether an event would currently be suppressed by the cooldown of the previous one.
    public var isCoolingDown: Bool {
        gate.isCoolingDown(atFrame: framesProcessed)
    }

    /// Returns to the start of a stream: clears the partial frame, filter history, streak, cooldown and counters.
    /// The configuration is kept.
    public mutating func reset() {
        gate.reset()
        downsampler = Downsampler48kTo16k()
        frameFill = 0
        framesProcessed = 0
        currentLevel = 0
    }

    /// Processes the next chunk of the stream.
    ///
    /// - Parameter samples: Mono samples at ``inputSampleRate``, normalised to −1...1; any count
    ///   (e.g. `array[range].span`).
    /// - Returns: The events fired by frames completed in this chunk, in order (usually empty).
    public mutating func process(_ samples: Span<Float>) -> [NoiseDetection] {
        var events: [NoiseDetection] = []
        var levels: [Int] = []
        process(samples, events: &events, levels: &levels, recordLevels: false)
        return events
    }

    /// Processes the next chunk of the stream and reports the level of every frame completed in it.
    ///
    /// - Parameters:
    ///   - samples: Mono samples at ``inputSampleRate``, normalised to −1...1; any count.
    ///   - frameLevels: Receives one level per completed frame, appended in order (existing contents kept).
    /// - Returns: The events fired by frames completed in this chunk, in order.
    public mutating func process(
        _ samples: Span<Float>,
        frameLevels: inout [Int]
    ) -> [NoiseDetection] {
        var events: [NoiseDetection] = []
        process(samples, events: &events, levels: &frameLevels, recordLevels: true)
        return events
    }

    /// Convenience overload for arrays.
    ///
    /// - Parameter samples: Mono samples at ``inputSampleRate``, normalised to −1...1.
    /// - Returns: The events fired by frames completed in this chunk.
    public mutating func process(_ samples: [Float]) -> [NoiseDetection] {
        let all = samples[...]
        return process(all.span)
    }

    /// Processes signed 16-bit samples (e.g. S16LE capture already in host byte order), scaled by 1/32768.
    /// Identical to calling the Float overload with `Float(sample) / 32768`.
    ///
    /// - Parameter samples: Mono samples at ``inputSampleRate``; any count (e.g. `array[range].span`).
    /// - Returns: The events fired by frames completed in this chunk.
    public mutating func process(int16 samples: Span<Int16>) -> [NoiseDetection] {
        var events: [NoiseDetection] = []
        var levels: [Int] = []
        process(int16: samples, events: &events, levels: &levels, recordLevels: false)
        return events
    }

    /// Processes signed 16-bit samples and reports the level of every frame completed in the chunk.
    ///
    /// - Parameters:
    ///   - samples: Mono samples at ``inputSampleRate``; any count.
    ///   - frameLevels: Receives one level per completed frame, appended in order (existing contents kept).
    /// - Returns: The events fired by frames completed in this chunk.
    public mutating func process(
        int16 samples: Span<Int16>,
        frameLevels: inout [Int]
    ) -> [NoiseDetection] {
        var events: [NoiseDetection] = []
        process(int16: samples, events: &events, levels: &frameLevels, recordLevels: true)
        return events
    }

    /// Convenience overload for arrays of signed 16-bit samples.
    ///
    /// - Parameter samples: Mono samples at ``inputSampleRate``.
    /// - Returns: The events fired by frames completed in this chunk.
    public mutating func process(int16 samples: [Int16]) -> [NoiseDetection] {
        let all = samples[...]
        return process(int16: all.span)
    }

    /// Converts Int16 input block by block into a reused Float buffer and processes it.
    private mutating func process(
        int16 samples: Span<Int16>,
        events: inout [NoiseDetection],
        levels: inout [Int],
        recordLevels: Bool
    ) {
        guard !samples.isEmpty else { return }
        var buffer: ContiguousArray<Float> = []
        swap(&buffer, &converted)
        defer { swap(&buffer, &converted) }
        if buffer.count < Self.conversionBlock {
            buffer = ContiguousArray(repeating: 0, count: Self.conversionBlock)
        }
        let scale: Float = 1 / 32_768
        var start = 0
        while start < samples.count {
            let count = min(Self.conversionBlock, samples.count - start)
            do {
                let source = samples.extracting(start..<(start + count))
                var target = buffer.mutableSpan
                for index in 0..<count {
                    target[index] = Float(source[index]) * scale
                }
            }
            process(
                buffer.span.extracting(0..<count),
                events: &events,
                levels: &levels,
                recordLevels: recordLevels
            )
            start += count
        }
    }

    /// Routes input at the input rate through the downsampler if needed.
    private mutating func process(
        _ samples: Span<Float>,
        events: inout [NoiseDetection],
        levels: inout [Int],
        recordLevels: Bool
    ) {
        guard inputSampleRate != Self.analysisSampleRate else {
            analyze(samples, events: &events, levels: &levels, recordLevels: recordLevels)
            return
        }
        var buffer: [Float] = []
        swap(&buffer, &downsampled)
        defer { swap(&buffer, &downsampled) }
        var start = 0
        while start < samples.count {
            let end = min(start + Self.decimationBlock, samples.count)
            buffer.removeAll(keepingCapacity: true)
            downsampler.process(samples.extracting(start..<end), into: &buffer)
            let block = buffer[...]
            analyze(block.span, events: &events, levels: &levels, recordLevels: recordLevels)
            start = end
        }
    }

    /// Splits 16 kHz samples into frames, carrying a partial frame across calls.
    private mutating func analyze(
        _ samples: Span<Float>,
        events: inout [NoiseDetection],
        levels: inout [Int],
        recordLevels: Bool
    ) {
        let frameSize = Self.frameSize
        var index = 0
        while index < samples.count {
            let level: Int
            if frameFill == 0, samples.count - index >= frameSize {
                // Whole frame inside the chunk: measure in place.
                level = SoundLevel.level(rms: SoundLevel.rms(samples.extracting(index..<(index + frameSize))))
                index += frameSize
            } else {
                let take = min(frameSize - frameFill, samples.count - index)
                let fill = frameFill
                do {
                    let source = samples.extracting(index..<(index + take))
                    var target = frame.mutableSpan
                    for offset in 0..<take {
                        target[fill + offset] = source[offset]
                    }
                }
                frameFill += take
                index += take
                guard frameFill == frameSize else { break }
                frameFill = 0
                level = SoundLevel.level(rms: SoundLevel.rms(frame.span))
            }
            currentLevel = level
            if recordLevels {
                levels.append(level)
            }
            if let event = gate.consume(level: level, frameIndex: framesProcessed) {
                events.append(event)
            }
            framesProcessed += 1
        }
    }
}
