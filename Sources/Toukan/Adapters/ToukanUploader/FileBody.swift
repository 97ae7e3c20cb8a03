import Foundation
import NIOCore
import ToukanCore

/// A `POST /upload` body as an async sequence of buffers: the multipart head, the file read from disk a chunk at a
/// time (async-http-client pulls the next one only when the connection has room: constant memory), the tail.
/// Counts what it hands out, for progress.
struct FileBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let head: [UInt8]
    let file: URL
    let length: Int64
    let tail: [UInt8]
    let chunkSize: Int
    let onSent: @Sendable (Int64) -> Void

    func makeAsyncIterator() -> Iterator {
        Iterator(body: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let body: FileBody
        private var stage = Stage.head
        private var handle: FileHandle?
        private var fileBytes: Int64 = 0
        private var sent: Int64 = 0

        private enum Stage { case head, file, tail, done }

        init(body: FileBody) {
            self.body = body
        }

        mutating func next() async throws -> ByteBuffer? {
            let chunk: [UInt8]
            switch stage {
            case .head:
                stage = .file
                chunk = body.head
            case .file:
                if handle == nil { handle = try FileHandle(forReadingFrom: body.file) }
                let wanted = Int(Swift.min(Int64(body.chunkSize), body.length - fileBytes))
                let data = wanted > 0 ? try handle!.read(upToCount: wanted) ?? Data() : Data()
                guard data.count == wanted else {
                    throw UploadFailure.localFile(
                        "\(body.file.path) ended at \(fileBytes + Int64(data.count)) of \(body.length) bytes")
                }
                fileBytes += Int64(wanted)
                if fileBytes == body.length {
                    stage = .tail
                    try handle?.close()
                }
                chunk = Array(data)
            case .tail:
                stage = .done
                chunk = body.tail
            case .done:
                return nil
            }
            sent += Int64(chunk.count)
            body.onSent(sent)
            return ByteBuffer(bytes: chunk)
        }
    }
}

/// Reads byte ranges of a recording's file (tus chunks).
struct FileReader {
    let file: URL

    init(_ file: URL) throws(UploadFailure) {
        guard FileManager.default.isReadableFile(atPath: file.path) else {
            throw .localFile("\(file.path) cannot be read")
        }
        self.file = file
    }

    func read(_ range: Range<Int64>) throws(UploadFailure) -> [UInt8] {
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(range.lowerBound))
            return Array(try handle.read(upToCount: range.count) ?? Data())
        } catch {
            throw .localFile("\(file.path) at \(range.lowerBound): \(error.localizedDescription)")
        }
    }
}
