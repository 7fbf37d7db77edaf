/// A forward: a broadcaster (uid) of a source channel whose tracks go into other channels.
public struct ForwardKey: Sendable, Hashable, CustomStringConvertible {
    /// The source channel.
    public var channel: String
    /// The forwarded uid (the same in every destination).
    public var uid: UInt32

    /// Creates a key.
    public init(channel: String, uid: UInt32) {
        self.channel = channel
        self.uid = uid
    }

    /// `uid 7 of show`.
    public var description: String { "uid \(uid) of \(channel)" }
}

/// The edge hosting a destination channel, as a placement names it.
public struct ForwardEdge: Sendable, Hashable, CustomStringConvertible {
    /// Its node id.
    public var id: String
    /// Its client endpoint, where the link connects.
    public var endpoint: String
    /// Its client CURVE public key (Z85), empty if it does not encrypt client links.
    public var curvePublicKey: String

    /// Creates an edge address.
    public init(id: String, endpoint: String, curvePublicKey: String = "") {
        self.id = id
        self.endpoint = endpoint
        self.curvePublicKey = curvePublicKey
    }

    /// `edge-2 (tcp://…)`.
    public var description: String { "\(id) (\(endpoint))" }
}

/// A running destination, as the frame path needs it.
public struct ForwardTarget: Sendable, Hashable {
    /// The destination channel (the channel the forwarded frames' headers name).
    public var channel: String
    /// Its edge (the link the frames go over).
    public var edge: ForwardEdge
}

/// What ``ForwardBook`` asks its shell to do.
public enum ForwardDirective: Sendable, Hashable {
    /// Ask a coordinator where `destination` is hosted (`CHANNEL_PLACE` with the token), avoiding
    /// `unreachableEdge`; answer with ``ForwardBook/placed(_:destination:attempt:_:now:)``.
    case place(ForwardKey, destination: String, token: String, attempt: UInt64, unreachableEdge: String?)
    /// Join `destination` on `edge` through the forward's link to it (opened if needed), as the
    /// forwarded uid, broadcaster; answer with ``ForwardBook/joined(_:destination:attempt:_:now:)``.
    case join(ForwardKey, destination: String, token: String, on: ForwardEdge, attempt: UInt64)
    /// Leave `destination` on `edge` (and close the link once it holds no channel).
    case leave(ForwardKey, destination: String, on: ForwardEdge)
    /// Tell the source session that a destination changed state (`FORWARD_STATE_CHANGED`).
    case notify(SessionID, ForwardStateChange)
    /// Ask the source publisher for a keyframe of its video.
    case requestKeyframe(TrackID, from: SessionID)
}

/// Limits and timers of forwards.
public struct ForwardSettings: Sendable, Hashable {
    /// Starts and updates of one forward allowed per second (more: `FORWARD_UPDATE_TOO_FREQUENT`).
    public var maxChangesPerSecond = 10
    /// At most one keyframe request to the source publisher per interval, however many
    /// destinations ask.
    public var keyframeRequestInterval: Duration = .milliseconds(500)
    /// An unreachable destination is placed again after this long.
    public var retryInterval: Duration = .seconds(1)
    /// ... this many times in a row, then it stays in failure.
    public var maxRetries = 60
    /// Redirects (`CHANNEL_ELSEWHERE`) followed per join before it counts as unreachable.
    public var maxRedirects = 3

    /// The defaults.
    public init() {}
}
