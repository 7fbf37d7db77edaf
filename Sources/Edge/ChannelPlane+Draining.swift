// Draining: an edge shutting down lets its clients move first (make before break) and closes
// what is left once only those who need not move remain, or at its deadline.

extension ChannelPlane {
    /// ``EdgeEvent/draining(within:)`` to every client session (not to edge-to-edge links, whose
    /// far ends pull again when the link closes, nor to stand-ins).
    public func drainingNotices(within: Duration) -> [EdgeDirective] {
        sessions.keys.sorted().compactMap { id in
            guard let session = sessions[id], session.isClientSession else { return nil }
            return .send(.draining(within: within), to: id)
        }
    }

    /// Whether a client is still expected to move: some client session holds a connection that
    /// is not a broadcaster's. Broadcasters stay joined here until the end (they publish on the
    /// new edge already), so viewers who have not moved yet never see them go offline.
    public var awaitsMovingClients: Bool {
        for channel in channels.values {
            for membership in channel.connections.values where membership.role != .broadcaster {
                if sessions[membership.session]?.isClientSession == true { return true }
            }
        }
        return false
    }
}

extension ClientSession {
    /// An app's session: not an edge-to-edge link and not a relay's stand-in.
    var isClientSession: Bool { !isStandIn && !isForwardLink && !isRelayLink }
}
