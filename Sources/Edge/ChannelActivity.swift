/// Something that happened in a channel that business servers hear about (through the
/// room-coordinator that owns the channel), numbered as the seeds' channel events
/// (``EdgeDirective/report(_:)``).
///
/// Unlike the user-joined / user-offline events clients get, audience members are reported too:
/// business servers count them.
public struct ChannelActivity: Sendable, Hashable, CustomStringConvertible {
    /// What happened; the raw value is the seeds' event number.
    public enum Kind: Int, Sendable, Hashable, CaseIterable {
        /// The channel's first connection on this edge.
        case channelCreated = 101
        /// The channel's last connection on this edge is gone.
        case channelDestroyed = 102
        /// A broadcaster joined.
        case broadcasterJoined = 103
        /// A broadcaster left (with a ``LeaveReason``).
        case broadcasterLeft = 104
        /// An audience member joined.
        case audienceJoined = 105
        /// An audience member left (with a ``LeaveReason``).
        case audienceLeft = 106
        /// An audience member became broadcaster.
        case roleToBroadcaster = 111
        /// A broadcaster became audience.
        case roleToAudience = 112
    }

    /// Why a user left (``Kind/broadcasterLeft`` and ``Kind/audienceLeft``); the raw value is the
    /// number in `ChannelLeaveReason` of the room contract.
    public enum LeaveReason: Int, Sendable, Hashable, CaseIterable {
        /// The user left the channel or closed its session.
        case quit = 1
        /// The client vanished (heartbeat timeout, unreachable).
        case dropped = 2
        /// Kicked by a ban.
        case kicked = 3
        /// The edge is shutting down; the client rejoins elsewhere.
        case server = 4
        /// The same uid (or the same client) took over from another session.
        case replaced = 5
        /// The token's join privilege expired.
        case privilegeExpired = 6
    }

    /// What happened.
    public var kind: Kind
    /// The channel.
    public var channel: String
    /// The user; 0 for ``Kind/channelCreated`` and ``Kind/channelDestroyed``.
    public var uid: UInt32
    /// Why the user left; `nil` unless ``kind`` is a leave.
    public var reason: LeaveReason?
    /// When the plane saw it, on the clock its entry points are given.
    public var at: Duration

    /// Creates an activity.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - channel: The channel.
    ///   - uid: The user (0 for the channel's own activities).
    ///   - reason: Why the user left, for leaves.
    ///   - at: When.
    public init(_ kind: Kind, channel: String, uid: UInt32 = 0, reason: LeaveReason? = nil, at: Duration) {
        self.kind = kind
        self.channel = channel
        self.uid = uid
        self.reason = reason
        self.at = at
    }

    /// `103 broadcaster joined show uid 7`, with the reason for leaves.
    public var description: String {
        var text = "\(kind.rawValue) \(kind) \(channel)"
        if kind != .channelCreated, kind != .channelDestroyed { text += " uid \(uid)" }
        if let reason { text += " (\(reason))" }
        return text
    }
}

extension ChannelActivity.LeaveReason {
    /// What the channel's other users are told when a broadcaster leaves this way. The client
    /// contract has no "kicked" offline reason: a kick looks like any other drop to them.
    var offlineReason: UserOfflineReason {
        self == .quit ? .quit : .dropped
    }
}
