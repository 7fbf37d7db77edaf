import ShowroomWire

// Subscriptions: explicit subscribe/unsubscribe, local mute, and how a subscription starts.

extension ChannelPlane {
    /// Subscribes to a remote user's track, overriding auto-subscribe for it. Allowed before the
    /// track is published: the subscription starts when it is.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - track: The channel, the remote uid and the kind.
    ///   - now: The current clock value.
    /// - Returns: The reply and, if the track is live, the subscription's start (state event, then a
    ///   GOP-cache flush or a keyframe request). Refusals: `NOT_JOINED`, `INVALID_ARGUMENT` (own uid).
    public mutating func subscribe(_ session: SessionID, requestID: UInt64 = 0, track: TrackID, now: Duration) -> [EdgeDirective] {
        setSubscription(session, requestID: requestID, track: track, wanted: true, kind: .subscribe, now: now)
    }

    /// Unsubscribes from a remote user's track, overriding auto-subscribe for it.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - track: The channel, the remote uid and the kind.
    ///   - now: The current clock value.
    /// - Returns: The reply and, for a live video track, its "stopped (unsubscribed)" state.
    public mutating func unsubscribe(_ session: SessionID, requestID: UInt64 = 0, track: TrackID, now: Duration) -> [EdgeDirective] {
        setSubscription(session, requestID: requestID, track: track, wanted: false, kind: .unsubscribe, now: now)
    }

    /// Mutes (or unmutes) a remote track locally: it stays subscribed but no frame is sent. Kept
    /// for tracks not published or subscribed yet. Unmuted video restarts at a keyframe, from the
    /// GOP cache when there is one — what makes "unmute on touch-up" instant.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - track: The channel, the remote uid and the kind.
    ///   - muted: Mute (true) or unmute.
    ///   - now: The current clock value.
    /// - Returns: The reply and, for subscribed video, the state change (and restart).
    public mutating func muteRemote(_ session: SessionID, requestID: UInt64 = 0, track: TrackID, muted: Bool, now: Duration) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard var channel = joinedChannel(session, track.channel, .muteRemote, requestID: requestID, now: now, &out) else { return out }
        defer { store(channel, now: now, &out) }
        let key = TrackKey(uid: track.uid, kind: track.kind)
        if muted {
            channel.connections[session]!.mutedTracks.insert(key)
        } else {
            channel.connections[session]!.mutedTracks.remove(key)
        }
        if let start = channel.tracks[key]?.setMuted(muted, for: session, reason: .localUnmuted) {
            if muted {
                if key.kind == .video {
                    out.append(.send(.remoteVideoStateChanged(track, state: .stopped, reason: .localMuted), to: session))
                }
            } else {
                startSubscription(start, of: session, to: key, in: &channel, reason: .localUnmuted, now: now, &out)
            }
        }
        reply(.done, .muteRemote, requestID: requestID, to: session, &out)
        return out
    }

    // MARK: - Internals

    mutating func setSubscription(
        _ session: SessionID, requestID: UInt64, track: TrackID, wanted: Bool, kind: EdgeRequestKind, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard var channel = joinedChannel(session, track.channel, kind, requestID: requestID, now: now, &out) else { return out }
        defer { store(channel, now: now, &out) }
        guard channel.connections[session]!.uid != track.uid else {
            fail(.invalidArgument("uid \(track.uid) is this connection's own uid; a user does not subscribe to itself"),
                 kind, requestID: requestID, to: session, channel: track.channel, now: now, &out)
            return out
        }
        let key = TrackKey(uid: track.uid, kind: track.kind)
        channel.connections[session]!.subscriptionOverrides[key] = wanted
        reconcileSubscription(of: session, to: key, in: &channel, on: .subscribed, off: .unsubscribed, now: now, &out)
        reply(.done, kind, requestID: requestID, to: session, &out)
        return out
    }

    /// Subscribes `session` to every track it wants and unsubscribes it from the others.
    mutating func reconcileSubscriptions(
        of session: SessionID, in channel: inout Channel<Frame>, on: RemoteVideoStateReason, off: RemoteVideoStateReason,
        now: Duration, _ out: inout [EdgeDirective]
    ) {
        for key in channel.trackKeys {
            reconcileSubscription(of: session, to: key, in: &channel, on: on, off: off, now: now, &out)
        }
    }

    /// Makes `session`'s subscription to the live track `key` match what it wants; `on` and `off`
    /// are the reasons reported to it.
    mutating func reconcileSubscription(
        of session: SessionID, to key: TrackKey, in channel: inout Channel<Frame>, on: RemoteVideoStateReason,
        off: RemoteVideoStateReason, now: Duration, _ out: inout [EdgeDirective]
    ) {
        guard let connection = channel.connections[session], let forwarder = channel.tracks[key] else { return }
        let wanted = connection.wantsSubscription(to: key)
        let subscribed = forwarder.subscriber(session)
        if wanted, subscribed == nil {
            let muted = connection.mutedTracks.contains(key)
            if let start = channel.tracks[key]!.addSubscriber(session, muted: muted, reason: on,
                                                              first: sessions[session]?.isRelayLink == true) {
                startSubscription(start, of: session, to: key, in: &channel, reason: on, now: now, &out)
            }
        } else if !wanted, let subscribed {
            channel.tracks[key]!.removeSubscriber(session)
            if key.kind == .video, !subscribed.muted {
                out.append(.send(.remoteVideoStateChanged(key.id(in: channel.name), state: .stopped, reason: off), to: session))
            }
        }
    }

    /// What a new or unmuted subscriber gets: "starting", then the GOP cache or a keyframe request.
    mutating func startSubscription(
        _ start: TrackForwarder<Frame>.Start, of session: SessionID, to key: TrackKey, in channel: inout Channel<Frame>,
        reason: RemoteVideoStateReason, now: Duration, _ out: inout [EdgeDirective]
    ) {
        let track = key.id(in: channel.name)
        switch start {
        case .flowing, .muted:
            break
        case .sendCache:
            out.append(.send(.remoteVideoStateChanged(track, state: .starting, reason: reason), to: session))
            out.append(.sendCachedFrames(track, to: session))
        case .awaitKeyframe:
            out.append(.send(.remoteVideoStateChanged(track, state: .starting, reason: reason), to: session))
            requestKeyframeIfDue(key, in: &channel, now: now, &out)
        }
    }

    /// Asks the track's publisher for a keyframe if one is wanted and the last request is old
    /// enough.
    mutating func requestKeyframeIfDue(_ key: TrackKey, in channel: inout Channel<Frame>, now: Duration, _ out: inout [EdgeDirective]) {
        guard channel.tracks[key]?.takeKeyframeRequest(now: now, interval: settings.keyframeRequestInterval) == true else { return }
        statistics.keyframeRequests += 1
        out.append(.requestKeyframe(key.id(in: channel.name), from: channel.tracks[key]!.publisher))
    }
}
