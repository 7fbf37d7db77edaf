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

    /// Opens the stand-in `id` for the origin's publisher `uid` of `channel` and joins it there
    /// as a broadcaster publishing nothing until the origin announces its tracks
    /// (``standInTrack(_:_:published:now:)``). Its grant never expires: the relay's book ends it.
    ///
    /// - Returns: Whether it joined (a stage that does not seat `uid`, or a name the plane
    ///   refuses, keep it out), and the directives.
    public mutating func joinStandIn(_ id: SessionID, channel: String, uid: UInt32, now: Duration) -> (joined: Bool, directives: [EdgeDirective]) {
        let grant = ChannelGrant(
            channel: channel, uid: uid, privileges: [.join: .never, .publishAudio: .never, .publishVideo: .never, .publishData: .never])
        var out = openStandIn(id, clientID: "showroom-relay-stand-in/\(channel)/\(uid)", now: now)
        out += join(
            id, channel: channel, uid: uid, role: .broadcaster,
            options: MediaOptions(publishAudio: false, publishVideo: false, autoSubscribeAudio: false, autoSubscribeVideo: false),
            grant: grant, now: now)
        return (connection(id, channel: channel) != nil, out)
    }

    /// The origin announced (`published`) or withdrew the stand-in `id`'s `track`: it publishes
    /// it here as well, or stops.
    public mutating func standInTrack(_ id: SessionID, _ track: TrackID, published: Bool, now: Duration) -> [EdgeDirective] {
        var update = MediaOptionsUpdate()
        switch track.kind {
        case .audio: update.publishAudio = published
        case .video: update.publishVideo = published
        }
        return updateOptions(id, channel: track.channel, update: update, now: now)
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
