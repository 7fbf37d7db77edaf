import ShowroomWire

// Relay edges: on the origin, the relay links' keyframe requests; on the relay, the stand-in
// sessions that publish the origin's publishers here.

extension ChannelPlane {
    /// Opens a stand-in session: a relay's local publisher for one publisher of its origin edge.
    /// It joins the channel as a broadcaster like any session, and its frames are the frames the
    /// relay link receives; unlike a client's session it never times out (the relay ends it when
    /// the publisher leaves the origin or the link is gone for good), and its joins and leaves are
    /// not reported (the origin reports the publisher).
    ///
    /// - Parameters:
    ///   - id: A session id no client connection can have.
    ///   - clientID: For logs.
    ///   - now: The current clock value.
    /// - Returns: The directives (a replaced session's effects, if `id` was open).
    public mutating func openStandIn(_ id: SessionID, clientID: String, now: Duration) -> [EdgeDirective] {
        let out = openSession(id, clientID: clientID, sdkVersion: "showroom-relay", now: now)
        sessions[id]?.isStandIn = true
        return out
    }

    /// Whether `session` is a relay edge's link (see ``RelayLinkIdentity``).
    public func isRelayLink(_ session: SessionID) -> Bool { sessions[session]?.isRelayLink ?? false }

    /// A relay link's `RELAY_KEYFRAME_REQUEST`: the publisher of `track` is asked for a keyframe
    /// if the link subscribes to the track and the track's last request is at least
    /// ``EdgeSettings/keyframeRequestInterval`` old. Anything else is ignored (a one-way message).
    ///
    /// - Parameters:
    ///   - track: The track the relay's viewers wait on.
    ///   - session: The relay link.
    ///   - now: The current clock value.
    /// - Returns: The keyframe request to the publisher, or nothing.
    public mutating func relayKeyframeRequest(_ track: TrackID, from session: SessionID, now: Duration) -> [EdgeDirective] {
        guard let client = sessions[session], client.isRelayLink else { return [] }
        touch(session, now: now)
        let key = TrackKey(uid: track.uid, kind: track.kind)
        guard let c = channels.index(forKey: track.channel), let t = channels.values[c].tracks.index(forKey: key),
            channels.values[c].tracks.values[t].takeKeyframeRequest(from: session, now: now, interval: settings.keyframeRequestInterval)
        else { return [] }
        statistics.keyframeRequests += 1
        return [.requestKeyframe(track, from: channels.values[c].tracks.values[t].publisher)]
    }
}
