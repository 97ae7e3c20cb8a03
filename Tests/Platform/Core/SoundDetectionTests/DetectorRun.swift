import SoundDetection

/// Result of feeding a whole signal through a detector.
struct DetectorRun: Equatable {
    /// Events in order.
    var events: [NoiseDetection]
    /// Level of every completed frame.
    var levels: [Int]

    /// Feeds `samples` to `detector` in chunks of `chunkSize`, collecting events and frame levels.
    ///
    /// - Parameters:
    ///   - samples: The whole signal at the detector's input rate.
    ///   - detector: The detector; it keeps its state afterwards.
    ///   - chunkSize: Samples per `process` call.
    /// - Returns: Events and frame levels.
    static func feed(_ samples: [Float], to detector: inout SoundDetector, chunkSize: Int = 4096) -> DetectorRun {
        var run = DetectorRun(events: [], levels: [])
        var start = 0
        while start < samples.count {
            let end = min(start + chunkSize, samples.count)
            let chunk = samples[start..<end]
            run.events += detector.process(chunk.span, frameLevels: &run.levels)
            start = end
        }
        return run
    }

    /// Creates a detector and feeds it a whole signal.
    ///
    /// - Parameters:
    ///   - samples: The whole signal.
    ///   - sampleRate: Its sample rate.
    ///   - configuration: Detection parameters.
    ///   - chunkSize: Samples per `process` call.
    /// - Returns: Events and frame levels.
    static func run(
        _ samples: [Float],
        sampleRate: Int = 16_000,
        configuration: SoundDetectorConfiguration = .default,
        chunkSize: Int = 4096
    ) throws -> DetectorRun {
        var detector = try SoundDetector(configuration: configuration, inputSampleRate: sampleRate)
        return feed(samples, to: &detector, chunkSize: chunkSize)
    }
}
