internal import EdgeProtocol
internal import ShowroomWire

/// A channel to forward the broadcaster's tracks into (`ForwardStreamInfo`, Agora's
/// `ChannelMediaRelayInfo`).
public struct ForwardDestination: Sendable, Hashable {
    /// The destination channel; never the source channel.
    public var channel: String
    /// A token for `channel` and the broadcaster's own uid with the join privilege and the
    /// publish privileges of the forwarded tracks.
    public var token: String

    /// Creates a destination.
    ///
    /// - Parameters:
    ///   - channel: The destination channel.
    ///   - token: A token for that channel and the broadcaster's uid (join and publish).
    public init(channel: String, token: String) {
        self.channel = channel
        self.token = token
    }

    var edgeDestination: EdgeProtocol.ForwardDestination {
        EdgeProtocol.ForwardDestination(channel: channel, token: token)
    }
}

/// One destination of a forward as the broadcaster's edge reports it.
public struct ForwardDestinationStatus: Sendable, Hashable {
    /// The destination channel.
    public var channel: String
    /// Its state.
    public var state: ForwardState
    /// Why it is in that state.
    public var reason: ForwardStateReason
    /// With ``ForwardState/failure``: the underlying error (a token code, `BANNED`, E3035 ...).
    public var error: ShowroomError?
    /// The forward is paused: nothing is sent to any destination.
    public var paused: Bool

    init(_ status: EdgeProtocol.ForwardDestinationStatus) {
        channel = status.channel
        state = ForwardState(status.state)
        reason = ForwardStateReason(status.reason)
        error = status.error
        paused = status.paused
    }
}
