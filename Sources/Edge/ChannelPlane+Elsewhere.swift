import ShowroomWire

// Channels placed on another edge: two sides of a partition can each place a channel, and once it
// heals the channel's owner coordinator names the edge it keeps. The other sends its clients there.

/// A channel this edge hosts that its owner coordinator placed on another edge.
public struct ChannelPlacedElsewhere: Sendable, Equatable {
    /// The channel.
    public var channel: String
    /// The edge it is placed on, as clients reach it.
    public var placedOn: WireRedirect

    /// Channel `channel`, placed on the edge `placedOn` names.
    public init(channel: String, placedOn: WireRedirect) {
        self.channel = channel
        self.placedOn = placedOn
    }
}

extension ChannelPlane {
    /// Sends the connections of channels placed elsewhere to the edge they are placed on: each is
    /// closed here with ``EdgeEvent/connectionClosed(channel:reason:)`` and `CHANNEL_ELSEWHERE`
    /// naming that edge, which the SDK joins at once (the app sees its connection reconnect) and a
    /// forwarding edge places again; the others see it go offline, and the leave is reported as
    /// the server's. Relay links and stand-ins are left: they follow the channel's origin on their
    /// own. A channel with nobody left goes as usual.
    ///
    /// - Returns: The directives.
    public mutating func sendElsewhere(_ moves: [ChannelPlacedElsewhere], now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        for move in moves {
            guard var channel = take(move.channel) else { continue }
            let error = ShowroomError.channelElsewhere(
                "channel \(move.channel) is placed on edge \(move.placedOn.edgeID) (\(move.placedOn.clientEndpoint)); join it there",
                redirect: move.placedOn)
            var sent = 0
            for session in channel.order where sessions[session].map({ !$0.isStandIn && !$0.isRelayLink }) == true {
                removeConnection(session, from: &channel, reason: .server, now: now, &out)
                out.append(.send(.connectionClosed(channel: move.channel, reason: error), to: session))
                sent += 1
            }
            if sent > 0 {
                out.append(.log(EdgeLogEntry(.notice, "channel \(move.channel) is placed on edge \(move.placedOn.edgeID): \(sent) connections sent there")))
            }
            store(channel, now: now, &out)
        }
        return out
    }
}
