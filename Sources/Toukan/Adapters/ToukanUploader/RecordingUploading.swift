public import Foundation
public import ToukanCore

/// What an upload attempt reports while it runs.
public enum UploadEvent: Sendable, Hashable {
    /// Bytes handed to the connection so far, of the request's (or the file's, for tus) total.
    case progress(sent: Int64, total: Int64)
    /// The server holds `offset` bytes at `location` (tus): keep both in the ledger so a later attempt resumes.
    case stored(offset: Int64, location: String?)
}

/// How one attempt ended: the server's memory, or the failure for the queue to classify.
public enum UploadOutcome: Sendable, Hashable {
    case uploaded(memoryId: String)
    case failed(UploadFailure)
}

/// Uploads one recording's file, once: the upload queue (a service) decides when, and records the outcome in the
/// ledger through the transitions. An in-memory twin of it lets the queue be tested without a server.
public protocol RecordingUploading: Sendable {
    /// One attempt to upload `recording`'s `file`, reporting progress to `report`.
    /// - Parameters:
    ///   - recording: The ledger row: its idempotency key, and its tus Location and offset to resume from.
    ///   - file: Where the recording's file is.
    ///   - report: Called with progress and (tus) stored offsets, in order, from the attempt's task.
    func upload(_ recording: Recording, file: URL, report: @escaping @Sendable (UploadEvent) -> Void) async
        -> UploadOutcome
}
