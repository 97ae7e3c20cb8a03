/// What `toukan start` / `toukan stop` answer: the seed's Siri replies, word for word.
public enum ToukanReply: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case recordingStarted = "Recording started"
    case alreadyRecording = "Toukan is already recording"
    case recordingSaved = "Recording saved. I'll upload it in the background."
    case notRecording = "Toukan isn't recording right now"

    public var description: String { rawValue }
}
