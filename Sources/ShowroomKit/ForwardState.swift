internal import EdgeProtocol

/// A forward's state for one destination channel
/// (``ShowroomEngine/startForwardStream(to:connection:)``; Agora's relay states, Volcengine's
/// forward states).
public enum ForwardState: Sendable, Hashable, CustomStringConvertible {
    /// Not forwarding: stopped, removed, or the broadcaster left the source channel.
    case idle
    /// The edge is placing the destination channel and joining it.
    case connecting
    /// Joined: the destination's viewers see the broadcaster (unless the forward is paused).
    case running
    /// Failed; the reason and error say why. An unreachable destination is retried by the edge.
    case failure

    /// `idle`, `connecting`, `running` or `failure`.
    public var description: String { edgeState.description }

    var edgeState: EdgeProtocol.ForwardState {
        switch self {
        case .idle: .idle
        case .connecting: .connecting
        case .running: .running
        case .failure: .failure
        }
    }

    init(_ state: EdgeProtocol.ForwardState) {
        switch state {
        case .idle: self = .idle
        case .connecting: self = .connecting
        case .running: self = .running
        case .failure: self = .failure
        }
    }
}

/// Why a forward destination's state changed (the vendors' relay events and error codes).
public enum ForwardStateReason: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Start or update added the destination.
    case started
    /// The destination's edge admitted the forwarded broadcaster.
    case joined
    /// The forward was stopped.
    case stopped
    /// An update no longer lists the destination.
    case removed
    /// The destination token was refused (Volcengine 1202); the error names the token code.
    case invalidToken
    /// The destination's edge could not be reached or died; the edge places the channel again
    /// every second for a while.
    case destinationUnreachable
    /// The broadcaster left the source channel or became audience.
    case sourceLeft
    /// The same uid is in the destination channel otherwise (Volcengine 1204).
    case sameUIDInDestination
    /// The destination refused for another reason (full, banned, ...): see the error.
    case destinationRefused
    /// A privilege of the destination token ran out.
    case tokenExpired
    /// The forward was paused / resumed (the state stays).
    case paused
    case resumed
    /// An update gave the destination a new token: it is joined again with it.
    case tokenUpdated
    /// The destination is placed and joined again after it was unreachable.
    case retrying

    /// The reason in words, e.g. `invalid token`.
    public var description: String { edgeReason.description }

    var edgeReason: EdgeProtocol.ForwardStateReason {
        EdgeProtocol.ForwardStateReason.allCases[Self.allCases.firstIndex(of: self)!]
    }

    init(_ reason: EdgeProtocol.ForwardStateReason) {
        self = Self.allCases[EdgeProtocol.ForwardStateReason.allCases.firstIndex(of: reason)!]
    }
}
