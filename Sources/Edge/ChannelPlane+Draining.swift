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

    /// Whether a client is still expected to move: a client session holds a connection and has
    /// not said it moved out. Viewers leave once they switched; broadcasters stay joined here
    /// until the end (so the viewers not yet moved never see them go offline) and say when they
    /// publish elsewhere.
    public var awaitsMovingClients: Bool {
        sessions.values.contains { $0.isClientSession && !$0.channels.isEmpty && !$0.hasMovedOut }
    }

    /// `EDGE_MOVED_OUT` from a client of a draining edge: this session is not waited for.
    public mutating func movedOut(_ session: SessionID) {
        sessions[session]?.hasMovedOut = true
    }
}

extension ClientSession {
    /// An app's session: not an edge-to-edge link and not a relay's stand-in.
    var isClientSession: Bool { !isStandIn && !isForwardLink && !isRelayLink }
}
