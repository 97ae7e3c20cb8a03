public import Foundation

/// 16-bit PCM WAV files written by the tests.
public enum WAVFile {
    /// Writes interleaved samples in −1...1 as a 16-bit PCM WAV file.
    public static func write(_ samples: [Float], channels: Int, sampleRate: Int, to url: URL) throws {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        let dataSize = samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + dataSize))
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16))
        append(UInt16(1))  // PCM
        append(UInt16(channels))
        append(UInt32(sampleRate))
        append(UInt32(sampleRate * channels * 2))
        append(UInt16(channels * 2))
        append(UInt16(16))
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(dataSize))
        for sample in samples {
            append(Int16((max(-1, min(1, sample)) * 32_767).rounded()))
        }
        try data.write(to: url)
    }

    /// A sine tone, the same on every channel.
    public static func tone(
        frequency: Double,
        amplitude: Double,
        seconds: Double,
        sampleRate: Int,
        channels: Int
    ) -> [Float] {
        let frames = Int(seconds * Double(sampleRate))
        var samples: [Float] = []
        samples.reserveCapacity(frames * channels)
        for frame in 0..<frames {
            let value = Float(amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate)))
            for _ in 0..<channels { samples.append(value) }
        }
        return samples
    }
}
