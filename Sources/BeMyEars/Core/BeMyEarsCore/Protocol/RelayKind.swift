/// The messages the server forwards between the two parties of an accepted call, payload untouched.
public enum RelayKind: Sendable, Hashable, CaseIterable {
    case offer
    case answer
    case ice
    case statsUpdate
    case videoVisible

    public var messageType: MessageType {
        switch self {
        case .offer: .offer
        case .answer: .answer
        case .ice: .ice
        case .statsUpdate: .statsUpdate
        case .videoVisible: .videoVisible
        }
    }

    public init?(_ type: MessageType) {
        switch type {
        case .offer: self = .offer
        case .answer: self = .answer
        case .ice: self = .ice
        case .statsUpdate: self = .statsUpdate
        case .videoVisible: self = .videoVisible
        default: return nil
        }
    }
}
