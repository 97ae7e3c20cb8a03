/// Where a recording stands in the upload queue (the seed's four states).
public enum UploadStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Saved locally, waiting to upload (also: waiting for the next retry or for the network).
    case pending
    /// An upload is in progress.
    case uploading
    /// The server confirmed it with a memory id. Final: it is never uploaded again.
    case uploaded
    /// Gave up: five failed attempts, or an answer no retry can change. Only a manual retry moves it.
    case failed
}
