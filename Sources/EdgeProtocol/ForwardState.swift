import ShowroomWire

/// A forward's state for one destination channel (Agora's relay states, Volcengine's forward
/// states).
public enum ForwardState: Sendable, Hashable, CustomStringConvertible {
    /// Not forwarding: stopped, removed, or the source left.
    case idle
    /// Placing the destination channel and joining it.
    case connecting
    /// Joined: frames are forwarded (unless the forward is paused).
    case running
    /// Failed; ``ForwardStateReason`` and the error say why.
    case failure

    /// `idle`, `connecting`, `running` or `failure`.
    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .running: "running"
        case .failure: "failure"
        }
    }
}

/// Why a destination's forward state changed (the vendors' relay events and errors).
public enum ForwardStateReason: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Start or update added the destination.
    case started
    /// The destination edge admitted the forwarded connection.
    case joined
    /// The forward was stopped.
    case stopped
    /// An update no longer lists the destination.
    case removed
    /// The destination token was refused (the error names the token code).
    case invalidToken
    /// The destination edge could not be reached or died; it is placed again every second for a
    /// while.
    case destinationUnreachable
    /// The broadcaster left the source channel or became audience.
    case sourceLeft
    /// The same uid joined the destination otherwise: the forwarded connection was replaced.
    case sameUIDInDestination
    /// The destination refused for another reason (full, banned, ...): see the error.
    case destinationRefused
    /// A privilege of the destination token ran out.
    case tokenExpired
    /// The forward was paused (nothing is sent; the state stays).
    case paused
    /// The forward was resumed.
    case resumed
    /// An update gave the destination a new token: it is joined again with it.
    case tokenUpdated
    /// The destination is placed and joined again after it was unreachable.
    case retrying

    public var description: String {
        switch self {
        case .started: "started"
        case .joined: "joined"
        case .stopped: "stopped"
        case .removed: "removed"
        case .invalidToken: "invalid token"
        case .destinationUnreachable: "destination unreachable"
        case .sourceLeft: "source left"
        case .sameUIDInDestination: "same uid in destination"
        case .destinationRefused: "destination refused"
        case .tokenExpired: "token expired"
        case .paused: "paused"
        case .resumed: "resumed"
        case .tokenUpdated: "token updated"
        case .retrying: "retrying"
        }
    }
}

/// One destination of a forward: a channel and a token for it.
public struct ForwardDestination: Sendable, Hashable {
    /// The destination channel; never the source channel.
    public var channel: String
    /// AccessToken2 for `channel` and the broadcaster's uid, with the join privilege and the
    /// publish privileges of the forwarded tracks.
    public var token: String

    /// Creates a destination.
    public init(channel: String, token: String) {
        self.channel = channel
        self.token = token
    }
}

/// One destination of a forward as the source edge sees it.
public struct ForwardDestinationStatus: Sendable, Hashable {
    /// The destination channel.
    public var channel: String
    public var state: ForwardState
    public var reason: ForwardStateReason
    /// With ``ForwardState/failure``: the underlying error.
    public var error: ShowroomError?
    /// The node id of the edge hosting the destination, once known ("" before).
    public var edge: String
    /// The forward is paused: nothing is sent to any destination.
    public var paused: Bool

    /// Creates a status.
    public init(channel: String, state: ForwardState, reason: ForwardStateReason, error: ShowroomError? = nil, edge: String = "", paused: Bool = false) {
        self.channel = channel
        self.state = state
        self.reason = reason
        self.error = error
        self.edge = edge
        self.paused = paused
    }
}

/// One destination's state change, for the broadcaster whose tracks are forwarded
/// (`FORWARD_STATE_CHANGED`).
public struct ForwardStateChange: Sendable, Hashable {
    /// The source channel.
    public var channel: String
    /// The forwarded uid.
    public var uid: UInt32
    /// The destination after the change.
    public var destination: ForwardDestinationStatus

    /// Creates a state change.
    public init(channel: String, uid: UInt32, destination: ForwardDestinationStatus) {
        self.channel = channel
        self.uid = uid
        self.destination = destination
    }
}

/// What a forwarding request does: the client kinds `START_FORWARD` … `RESUME_FORWARD`, and the
/// coordinators' `FORWARD_COMMAND`.
public enum ForwardOperation: Sendable, Hashable {
    /// Start forwarding into 1-4 destinations.
    case start([ForwardDestination])
    /// Replace the destination set (0-4).
    case update([ForwardDestination])
    /// Stop: every destination goes idle.
    case stop
    /// Stop sending frames, staying joined.
    case pause
    /// Send frames again.
    case resume
}

/// What forwards accept.
public enum ForwardLimits {
    /// Most destinations of one forward (Volcengine's 4).
    public static let maxDestinations = 4
    /// Longest destination token in bytes.
    public static let maxTokenBytes = 2048

    /// Checks a destination set: at most ``maxDestinations``, valid channel names, none the
    /// source channel or listed twice, tokens of 1 - ``maxTokenBytes`` bytes.
    ///
    /// - Parameters:
    ///   - destinations: The destinations asked for.
    ///   - source: The source channel.
    /// - Throws: `FORWARD_TOO_MANY_DESTINATIONS`, `INVALID_ARGUMENT` (a channel name, a token
    ///   size), `FORWARD_INVALID_DESTINATION` (the source itself, a repeat).
    public static func validate(_ destinations: [ForwardDestination], source: String) throws(ShowroomError) {
        guard destinations.count <= maxDestinations else {
            throw ShowroomError(.forwardTooManyDestinations,
                "\(destinations.count) destinations asked; a forward has at most \(maxDestinations)")
        }
        var seen = Set<String>()
        for (index, destination) in destinations.enumerated() {
            try Names.validateChannel(destination.channel, field: "destinations[\(index)].channel")
            guard destination.channel != source else {
                throw ShowroomError(.forwardInvalidDestination,
                    "destination '\(destination.channel)' is the source channel; forward into other channels only")
            }
            guard seen.insert(destination.channel).inserted else {
                throw ShowroomError(.forwardInvalidDestination,
                    "destination '\(destination.channel)' is listed twice; list each channel once")
            }
            guard !destination.token.isEmpty, destination.token.utf8.count <= maxTokenBytes else {
                throw .invalidArgument(
                    "destinations[\(index)].token is \(destination.token.utf8.count) bytes; give a token of 1-\(maxTokenBytes) bytes for channel '\(destination.channel)' and the broadcaster's uid")
            }
        }
    }
}
