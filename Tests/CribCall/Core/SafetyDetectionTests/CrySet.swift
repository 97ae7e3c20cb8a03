import Foundation
import TestSupport

/// The labelled clip set the cry detector is measured on, generated at test time (nothing binary is committed):
/// synthetic cries (a glottal pulse train with a rising–falling, wavering pitch of 350–560 Hz, vowel formants,
/// phonations of 0.6–1.4 s between short inhalations), the same cries in white noise at 10, 5 and 0 dB SNR, speech
/// from espeak-ng in four voices up to a very high pitch, music (plucked notes and a bowed note with vibrato), white
/// noise, a fan (pink noise with a motor hum), a dog's barks, door slams, and two sounds close to a cry: a cat's
/// meows and a lullaby hummed. 16 kHz mono, 6 s a clip, deterministic.
///
/// The cries are synthetic: the figures say how the detector tells this kind of sound from the others, not how it
/// hears every real baby (see the module README).
enum CrySet {
    enum Category: String, CaseIterable, Sendable {
        case cry
        case cryInNoise10dB = "cry + white noise 10 dB"
        case cryInNoise5dB = "cry + white noise 5 dB"
        case cryInNoise0dB = "cry + white noise 0 dB"
        case speech
        case music
        case whiteNoise = "white noise"
        case fan
        case dog
        case door = "door slam"
        /// Hard cases, sounds close to a cry: a cat's meows and a lullaby hummed.
        case cat = "cat meowing"
        case humming = "lullaby hummed"

        var isCry: Bool { [.cry, .cryInNoise10dB, .cryInNoise5dB, .cryInNoise0dB].contains(self) }
    }

    struct Clip: Sendable {
        var category: Category
        var name: String
        var samples: [Float]
    }

    static let rate = 16_000
    static let seconds = 6.0

    /// Every clip, `perCategory` of each (speech: one per voice and sentence, up to `perCategory`).
    static func clips(perCategory: Int = 8) async throws -> [Clip] {
        var clips: [Clip] = []
        for index in 0..<perCategory {
            var random = SplitMix64(seed: UInt64(index) &* 7_919 &+ 1)
            let cry = self.cry(&random)
            clips.append(Clip(category: .cry, name: "cry \(index)", samples: cry))
            for (category, snr) in [(Category.cryInNoise10dB, 10.0), (.cryInNoise5dB, 5), (.cryInNoise0dB, 0)] {
                clips.append(Clip(category: category, name: "cry \(index)", samples: mix(cry, noiseAt: snr, &random)))
            }
            clips.append(Clip(category: .music, name: "music \(index)", samples: music(index, &random)))
            clips.append(Clip(category: .whiteNoise, name: "noise \(index)", samples: whiteNoise(&random, level: 0.1)))
            clips.append(Clip(category: .fan, name: "fan \(index)", samples: fan(&random)))
            clips.append(Clip(category: .dog, name: "dog \(index)", samples: dog(&random)))
            clips.append(Clip(category: .door, name: "door \(index)", samples: door(&random)))
            clips.append(Clip(category: .cat, name: "cat \(index)", samples: cat(&random)))
            clips.append(Clip(category: .humming, name: "humming \(index)", samples: humming(&random)))
        }
        clips += try await speech(count: perCategory)
        return clips
    }

    // MARK: - Cries

    /// One 6 s cry: phonations of 0.6–1.4 s, each a pitch contour rising then falling around 350–560 Hz with
    /// jitter and vibrato, 12 harmonics shaped by two vowel formants, separated by 0.15–0.45 s inhalations.
    static func cry(_ random: inout SplitMix64) -> [Float] {
        var samples = roomNoise(&random)
        let level = Float(0.15 * pow(10, random.uniform(-0.3, 0.2)))
        let formants = (random.uniform(850, 1_150), random.uniform(1_500, 2_300))
        var time = random.uniform(0.1, 0.6)
        var phase = 0.0
        while time < seconds - 0.4 {
            let length = min(random.uniform(0.6, 1.4), seconds - time)
            let base = random.uniform(350, 520)
            let vibrato = (rate: random.uniform(4, 8), depth: random.uniform(0.02, 0.05))
            var jitter = 0.0
            let start = Int(time * Double(rate))
            let count = Int(length * Double(rate))
            for offset in 0..<count where start + offset < samples.count {
                let t = Double(offset) / Double(rate)
                let progress = t / length
                jitter = 0.995 * jitter + random.uniform(-0.002, 0.002)
                let contour = 1 + 0.12 * sin(Double.pi * progress)  // rises, then falls
                let f0 = base * contour * (1 + vibrato.depth * sin(2 * Double.pi * vibrato.rate * t) + jitter)
                phase += 2 * Double.pi * f0 / Double(rate)
                var value = 0.0
                for harmonic in 1...12 {
                    let frequency = f0 * Double(harmonic)
                    guard frequency < 7_500 else { break }
                    let shape = formant(frequency, formants.0, 250) + 0.6 * formant(frequency, formants.1, 350)
                    value += (0.4 + shape) / Double(harmonic) * sin(Double(harmonic) * phase)
                }
                let envelope = min(1, progress * 12) * min(1, (1 - progress) * 8)
                samples[start + offset] += level * Float(envelope * value) * 0.5
            }
            time += length
            // The inhalation: a short breathy noise.
            let gap = random.uniform(0.15, 0.45)
            let gapStart = Int(time * Double(rate))
            for offset in 0..<Int(gap * Double(rate)) where gapStart + offset < samples.count {
                samples[gapStart + offset] += level * 0.08 * Float(random.uniform(-1, 1))
            }
            time += gap
        }
        return samples
    }

    /// A resonance's gain at `frequency` (1 at its centre).
    static func formant(_ frequency: Double, _ centre: Double, _ bandwidth: Double) -> Double {
        let x = (frequency - centre) / bandwidth
        return 1 / (1 + x * x)
    }

    /// `signal` with white noise added at `snr` dB (relative to the signal's power while it sounds).
    static func mix(_ signal: [Float], noiseAt snr: Double, _ random: inout SplitMix64) -> [Float] {
        let loud = signal.filter { abs($0) > 0.01 }
        let power = loud.isEmpty ? 1e-4 : Double(loud.reduce(0) { $0 + $1 * $1 }) / Double(loud.count)
        let noiseLevel = (power / pow(10, snr / 10) * 3).squareRoot()  // uniform noise has power level²/3
        return signal.map { $0 + Float(noiseLevel * random.uniform(-1, 1)) }
    }

    // MARK: - Other sounds

    static func roomNoise(_ random: inout SplitMix64) -> [Float] {
        (0..<Int(seconds * Double(rate))).map { _ in Float(random.uniform(-1, 1) * 0.002) }
    }

    static func whiteNoise(_ random: inout SplitMix64, level: Double) -> [Float] {
        (0..<Int(seconds * Double(rate))).map { _ in Float(random.uniform(-1, 1) * level) }
    }

    /// Pink-ish noise (summed low-passed white noise) with a 100 or 120 Hz hum and its harmonics.
    static func fan(_ random: inout SplitMix64) -> [Float] {
        let hum = random.uniform(0, 1) < 0.5 ? 100.0 : 120.0
        var low = 0.0
        var mid = 0.0
        return (0..<Int(seconds * Double(rate))).map { index in
            let white = random.uniform(-1, 1)
            low = 0.98 * low + 0.02 * white
            mid = 0.8 * mid + 0.2 * white
            let t = Double(index) / Double(rate)
            let motor =
                0.03 * sin(2 * Double.pi * hum * t) + 0.015 * sin(4 * Double.pi * hum * t)
                + 0.008 * sin(6 * Double.pi * hum * t)
            return Float(0.6 * low + 0.15 * mid + motor)
        }
    }

    /// Plucked notes (odd clips) or one bowed note with a violinist's vibrato (even clips), 196–784 Hz.
    static func music(_ index: Int, _ random: inout SplitMix64) -> [Float] {
        var samples = roomNoise(&random)
        let scale = [196.0, 220, 247, 262, 294, 330, 349, 392, 440, 494, 523, 587, 659, 698, 784]
        var time = 0.1
        var phase = 0.0
        while time < seconds - 0.2 {
            let bowed = index.isMultiple(of: 2)
            let length = bowed ? random.uniform(1.2, 2.5) : random.uniform(0.25, 0.7)
            let note = scale[Int(random.uniform(0, Double(scale.count) - 0.001))]
            let start = Int(time * Double(rate))
            for offset in 0..<Int(length * Double(rate)) where start + offset < samples.count {
                let t = Double(offset) / Double(rate)
                let f0 = bowed ? note * (1 + 0.012 * sin(2 * Double.pi * 5.5 * t)) : note
                phase += 2 * Double.pi * f0 / Double(rate)
                var value = 0.0
                for harmonic in 1...6 { value += sin(Double(harmonic) * phase) / Double(harmonic * harmonic) }
                let envelope = bowed ? min(1, t * 6) * min(1, (length - t) * 6) : exp(-4 * t)
                samples[start + offset] += Float(0.2 * envelope * value)
            }
            time += length
        }
        return samples
    }

    /// Two to five barks of 0.12–0.25 s: a harsh 500–900 Hz voice with noise, falling in pitch.
    static func dog(_ random: inout SplitMix64) -> [Float] {
        var samples = roomNoise(&random)
        let barks = Int(random.uniform(2, 5.999))
        var time = random.uniform(0.3, 1)
        for _ in 0..<barks {
            let length = random.uniform(0.12, 0.25)
            let f0 = random.uniform(500, 900)
            var phase = 0.0
            let start = Int(time * Double(rate))
            for offset in 0..<Int(length * Double(rate)) where start + offset < samples.count {
                let t = Double(offset) / Double(rate)
                phase += 2 * Double.pi * f0 * (1 - 0.3 * t / length) / Double(rate)
                var value = 0.0
                for harmonic in 1...5 { value += sin(Double(harmonic) * phase) / Double(harmonic) }
                let envelope = min(1, t * 40) * exp(-6 * t)
                samples[start + offset] += Float(0.3 * envelope * (value + 0.6 * random.uniform(-1, 1)))
            }
            time += length + random.uniform(0.25, 0.9)
        }
        return samples
    }

    /// One or two slams: a sharp crack with a decaying 60–150 Hz rumble.
    static func door(_ random: inout SplitMix64) -> [Float] {
        var samples = roomNoise(&random)
        for slam in 0..<Int(random.uniform(1, 2.999)) {
            let start = Int((1 + 2.5 * Double(slam) + random.uniform(0, 0.5)) * Double(rate))
            let rumble = random.uniform(60, 150)
            for offset in 0..<Int(0.8 * Double(rate)) where start + offset < samples.count {
                let t = Double(offset) / Double(rate)
                let crack = random.uniform(-1, 1) * exp(-60 * t)
                let body = sin(2 * Double.pi * rumble * t) * exp(-6 * t)
                samples[start + offset] += Float(0.6 * crack + 0.4 * body)
            }
        }
        return samples
    }

    /// Meows of 0.5–1 s every 1.5–2.5 s: a voice gliding up from 500 to about 750 Hz and down, nasal.
    static func cat(_ random: inout SplitMix64) -> [Float] {
        var samples = roomNoise(&random)
        var time = random.uniform(0.2, 0.8)
        while time < seconds - 1 {
            let length = random.uniform(0.5, 1)
            let low = random.uniform(450, 550)
            var phase = 0.0
            let start = Int(time * Double(rate))
            for offset in 0..<Int(length * Double(rate)) where start + offset < samples.count {
                let progress = Double(offset) / (length * Double(rate))
                let f0 = low * (1 + 0.5 * sin(Double.pi * progress) * (1 - 0.4 * progress))
                phase += 2 * Double.pi * f0 / Double(rate)
                var value = 0.0
                for harmonic in 1...8 {
                    value +=
                        (0.3 + formant(f0 * Double(harmonic), 1_400, 400)) / Double(harmonic)
                        * sin(Double(harmonic) * phase)
                }
                let envelope = min(1, progress * 10) * min(1, (1 - progress) * 6)
                samples[start + offset] += Float(0.15 * envelope * value)
            }
            time += length + random.uniform(0.8, 1.6)
        }
        return samples
    }

    /// A lullaby hummed ("mmm"): notes of 0.4–1 s around 260–390 Hz with a singer's slight vibrato, legato.
    static func humming(_ random: inout SplitMix64) -> [Float] {
        var samples = roomNoise(&random)
        let notes = [262.0, 294, 330, 349, 392]
        var time = 0.2
        var phase = 0.0
        while time < seconds - 0.3 {
            let length = random.uniform(0.4, 1)
            let note = notes[Int(random.uniform(0, Double(notes.count) - 0.001))]
            let start = Int(time * Double(rate))
            for offset in 0..<Int(length * Double(rate)) where start + offset < samples.count {
                let t = Double(offset) / Double(rate)
                let f0 = note * (1 + 0.01 * sin(2 * Double.pi * 5 * t))
                phase += 2 * Double.pi * f0 / Double(rate)
                // A nasal hum: a strong fundamental, weak upper harmonics.
                let value = sin(phase) + 0.3 * sin(2 * phase) + 0.1 * sin(3 * phase)
                let envelope = min(1, t * 15) * min(1, (length - t) * 15) * 0.7 + 0.3
                samples[start + offset] += Float(0.12 * envelope * value)
            }
            time += length
        }
        return samples
    }

    /// espeak-ng reading sentences in four voices, from an adult man to a very high pitch (`-p 99`).
    static func speech(count: Int) async throws -> [Clip] {
        let voices = [("en-us", "50"), ("en-us+f3", "70"), ("en-us+f4", "90"), ("en-us+f2", "99")]
        let sentences = [
            "Good morning, did you sleep well last night?", "Please bring the blue blanket from the other room.",
            "We can go to the park after lunch if it stops raining.", "Look at the little duck swimming in the pond.",
        ]
        var clips: [Clip] = []
        for index in 0..<count {
            let (voice, pitch) = voices[index % voices.count]
            let sentence = sentences[(index / voices.count + index) % sentences.count]
            let wav = FileManager.default.temporaryDirectory.appendingPathComponent("cryset-speech-\(UUID()).wav")
            defer { try? FileManager.default.removeItem(at: wav) }
            let result = try await Subprocess.run("espeak-ng", ["-v", voice, "-p", pitch, "-w", wav.path, sentence])
            guard result.status == 0 else { throw CrySetFailure("espeak-ng failed: \(result.stderrText)") }
            let (rate, samples) = try readWAV(Data(contentsOf: wav))
            var resampled = resample(samples, from: rate, to: Self.rate)
            resampled = Array(resampled.prefix(Int(seconds * Double(Self.rate))))
            clips.append(Clip(category: .speech, name: "\(voice) -p \(pitch)", samples: resampled))
        }
        return clips
    }

    /// 16-bit PCM mono WAV: its rate and samples.
    static func readWAV(_ data: Data) throws -> (Int, [Float]) {
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        guard bytes.count > 44, bytes[0..<4].elementsEqual("RIFF".utf8) else { throw CrySetFailure("not a WAV file") }
        let rate = u32(24)
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = u32(offset + 4)
            if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                let end = min(bytes.count, offset + 8 + size)
                let samples = stride(from: offset + 8, to: end - 1, by: 2).map {
                    Float(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) / 32_768
                }
                return (rate, samples)
            }
            offset += 8 + size
        }
        throw CrySetFailure("no data chunk in the WAV file")
    }

    /// Linear-interpolation resampling (speech for a classifier, not for listening).
    static func resample(_ samples: [Float], from source: Int, to target: Int) -> [Float] {
        guard source != target, !samples.isEmpty else { return samples }
        let count = samples.count * target / source
        return (0..<count).map { index in
            let position = Double(index) * Double(source) / Double(target)
            let lower = min(samples.count - 1, Int(position))
            let upper = min(samples.count - 1, lower + 1)
            let weight = Float(position - Double(lower))
            return samples[lower] * (1 - weight) + samples[upper] * weight
        }
    }
}

extension SplitMix64 {
    /// A uniform sample in `low..<high`.
    mutating func uniform(_ low: Double, _ high: Double) -> Double {
        Double.random(in: low..<high, using: &self)
    }
}

struct CrySetFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
