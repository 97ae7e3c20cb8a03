public import Foundation
import TestSupport
public import ToukanCore

/// Recordings with real files in a data directory, for the upload tests.
public enum RecordingFiles {
    /// A fresh data directory with a `recordings` folder.
    public static func dataDirectory() throws -> URL {
        let directory = try Subprocess.temporaryDirectory("toukan-upload")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("recordings"), withIntermediateDirectories: true)
        return directory
    }

    /// Recording `number` (``LedgerFixtures/pending(_:minutesAfterEpoch:)``) with a file of `size` reproducible
    /// pseudo-random bytes under `dataDirectory`.
    /// - Returns: The ledger row, the file's URL and its bytes.
    public static func make(_ number: UInt8, size: Int, in dataDirectory: URL) throws -> (Recording, URL, [UInt8]) {
        let recording = LedgerFixtures.pending(number, minutesAfterEpoch: Double(number))
        var generator = SplitMix64(seed: UInt64(number) &* 7919 &+ UInt64(size))
        let bytes = generator.bytes(size)
        let file = dataDirectory.appendingPathComponent(recording.filePath)
        try Data(bytes).write(to: file)
        return (recording, file, bytes)
    }
}
