import ShowroomWire

/// Who may control which forward, read from the plane: a client its own connection's, a
/// coordinator any connected broadcaster's.
extension ForwardBook {
    /// A client's forwarding request (`START_FORWARD` … `RESUME_FORWARD`) from `session`: its
    /// channel and operation, and the forward it controls there (``sourceKey(channel:session:in:)``).
    ///
    /// - Throws: `NO_SESSION` when no session is open on the connection, the request's own
    ///   decoding errors, or why the session may not control a forward in that channel.
    public func clientRequest<Frame>(
        _ envelope: WireEnvelope, from session: SessionID, in plane: ChannelPlane<Frame>
    ) throws(ShowroomError) -> (channel: String, operation: ForwardOperation, key: ForwardKey) {
        guard plane.session(session) != nil else { throw .noSession("no session is open on this connection") }
        let (channel, operation) = try EdgeCodec.forwardRequest(from: envelope)
        return (channel, operation, try sourceKey(channel: channel, session: session, in: plane))
    }

    /// The forward `session` may control in `channel`: its own uid there, as
    /// ``sourceKey(channel:uid:role:clientID:)`` allows.
    ///
    /// - Throws: `NOT_JOINED` when the session is not connected to the channel.
    public func sourceKey<Frame>(channel: String, session: SessionID, in plane: ChannelPlane<Frame>) throws(ShowroomError) -> ForwardKey {
        guard let connection = plane.connection(session, channel: channel) else {
            throw .notJoined("this session is not connected to channel '\(channel)'; join it as broadcaster before forwarding")
        }
        return try sourceKey(channel: channel, uid: connection.uid, role: connection.role, clientID: plane.session(session)?.clientID ?? "")
    }

    /// What a coordinator's `FORWARD_COMMAND` for `uid` in `channel` addresses: that uid's
    /// connection here and its forward.
    ///
    /// - Throws: `NOT_JOINED` when the uid is not connected to the channel on this edge.
    public func commandSource<Frame>(
        channel: String, uid: UInt32, in plane: ChannelPlane<Frame>
    ) throws(ShowroomError) -> (session: SessionID, key: ForwardKey) {
        guard let connection = plane.channel(channel)?.connections.first(where: { $0.uid == uid }) else {
            throw .notJoined("uid \(uid) is not connected to channel '\(channel)' on this edge")
        }
        return (connection.session, try sourceKey(channel: channel, session: connection.session, in: plane))
    }
}
