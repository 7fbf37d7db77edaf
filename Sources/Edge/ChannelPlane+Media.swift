import ShowroomWire

// The frame path: forwarding, GOP-cache flushes, refusals.

extension ChannelPlane {
    /// Forwards one media frame from a publisher to the track's subscribers — the hot path.
    ///
    /// The frame goes out only if the session publishes that track in that channel (broadcaster
    /// role, media option and privilege all allowing it) and fits ``EdgeLimits/maxFrameBytes``;
    /// otherwise nothing is forwarded and the publisher gets an ``EdgeEvent/error(_:channel:track:)``
    /// (at most once per ``EdgeSettings/refusalReportInterval``): `ROLE_FORBIDS_PUBLISH` for an
    /// audience member, `NOT_JOINED`, `BANNED`, `TRACK_NOT_PUBLISHED`, `TOKEN_MISSING_PRIVILEGE`,
    /// `PRIVILEGE_EXPIRED`, `FRAME_TOO_LARGE`, `UNKNOWN_TRACK`, or `INVALID_ARGUMENT` for a header
    /// uid that is not the connection's.
    ///
    /// `send` is called once per subscriber that gets the frame, in subscription order; it must
    /// not call back into the plane. Nothing is allocated unless something changes (a subscriber
    /// becomes congested or recovers, a keyframe request is due, a subscriber is gone).
    ///
    /// - Parameters:
    ///   - frame: The frame as the shell forwards it. A video frame is kept in the GOP cache until
    ///     the next keyframe, so it must stay valid (for a `Multipart`: not a reused receive buffer).
    ///   - info: What the header says.
    ///   - session: The publishing client connection.
    ///   - now: The current clock value.
    ///   - send: Sends the frame to one subscriber; returns how it went.
    /// - Returns: Events for state changes, keyframe requests, refusals, dropped sessions.
    public mutating func forward(
        _ frame: Frame, info: MediaFrameInfo, from session: SessionID, now: Duration,
        send: (SessionID, Frame) -> DeliveryOutcome
    ) -> [EdgeDirective] {
        statistics.framesReceived += 1
        guard let sessionIndex = sessions.index(forKey: session) else {
            // No session to tell: its heartbeats get NO_SESSION instead.
            statistics.framesRefused += 1
            return []
        }
        sessions.values[sessionIndex].lastHeard = now
        guard info.payloadSize <= settings.limits.maxFrameBytes, let kind = info.kind,
            let c = channels.index(forKey: info.channel),
            let t = channels.values[c].tracks.index(forKey: TrackKey(uid: info.publisherUID, kind: kind)),
            channels.values[c].tracks.values[t].publisher == session
        else {
            return refuseFrame(info, from: session, now: now)
        }
        if kind == .audio {
            channels.values[c].volume.record(uid: info.publisherUID, level: info.audioLevel, at: now)
        }
        var transitions = ContiguousArray<SubscriberTransition>()
        swap(&transitions, &transitionScratch)
        defer {
            transitions.removeAll(keepingCapacity: true)
            swap(&transitions, &transitionScratch)
        }
        let counts = channels.values[c].tracks.values[t].forward(
            frame, isKeyframe: info.isKeyframe, bytes: info.payloadSize, transitions: &transitions, send: send)
        statistics.framesDelivered += UInt64(counts.delivered)
        statistics.payloadBytesDelivered &+= UInt64(counts.delivered) &* UInt64(info.payloadSize)
        statistics.framesSkipped += UInt64(counts.skipped)
        statistics.framesDropped += UInt64(counts.dropped)
        guard !transitions.isEmpty else { return [] }
        return finishDelivery(TrackID(channel: info.channel, uid: info.publisherUID, kind: kind), c, t, transitions, now: now)
    }

    /// The session publishing `track`, if one does.
    public func publisher(of track: TrackID) -> SessionID? {
        channels[track.channel]?.tracks[TrackKey(uid: track.uid, kind: track.kind)]?.publisher
    }

    /// Sends a new (or unmuted) video subscriber the track's GOP cache, as asked by
    /// ``EdgeDirective/sendCachedFrames(_:to:)``: the keyframe and the deltas since, in order, so
    /// its first decodable frame arrives at once. Call it when carrying out that directive, before
    /// the track's next frame is forwarded.
    ///
    /// - Parameters:
    ///   - track: The video track.
    ///   - session: The subscriber.
    ///   - now: The current clock value.
    ///   - send: Sends one frame to the subscriber; returns how it went.
    /// - Returns: The subscriber's "decoding" event, or a keyframe request if its queue filled up.
    public mutating func sendCachedFrames(
        _ track: TrackID, to session: SessionID, now: Duration, send: (SessionID, Frame) -> DeliveryOutcome
    ) -> [EdgeDirective] {
        guard let c = channels.index(forKey: track.channel),
            let t = channels.values[c].tracks.index(forKey: TrackKey(uid: track.uid, kind: track.kind))
        else { return [] }
        var transitions = ContiguousArray<SubscriberTransition>()
        swap(&transitions, &transitionScratch)
        defer {
            transitions.removeAll(keepingCapacity: true)
            swap(&transitions, &transitionScratch)
        }
        let counts = channels.values[c].tracks.values[t].sendCache(to: session, transitions: &transitions, send: send)
        statistics.framesDelivered += UInt64(counts.delivered)
        statistics.cachedFramesDelivered += UInt64(counts.delivered)
        statistics.framesDropped += UInt64(counts.dropped)
        return finishDelivery(track, c, t, transitions, now: now)
    }

    /// Turns the subscribers' transitions into events, asks for a keyframe if one is wanted and
    /// due, and drops the sessions found gone (last: it invalidates the indices).
    mutating func finishDelivery(
        _ track: TrackID, _ c: Dictionary<String, Channel<Frame>>.Index, _ t: Dictionary<TrackKey, TrackForwarder<Frame>>.Index,
        _ transitions: ContiguousArray<SubscriberTransition>, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        var gone: [SessionID] = []
        for transition in transitions {
            switch transition.change {
            case .videoState(let state, let reason):
                out.append(.send(.remoteVideoStateChanged(track, state: state, reason: reason), to: transition.session))
            case .unreachable:
                gone.append(transition.session)
            }
        }
        if channels.values[c].tracks.values[t].takeKeyframeRequest(now: now, interval: settings.keyframeRequestInterval) {
            statistics.keyframeRequests += 1
            out.append(.requestKeyframe(track, from: channels.values[c].tracks.values[t].publisher))
        }
        for session in gone {
            out += sessionUnreachable(session, now: now)
        }
        return out
    }

    /// Refuses a frame the shell found unfit before the plane could look at it (a wrong frame
    /// count, a header that does not decode or fails ``EdgeCodec/checkedFrameInfo(header:payloadSize:)``),
    /// reported to its sender like the plane's own refusals: at most once per
    /// ``EdgeSettings/refusalReportInterval`` for the same code and channel.
    ///
    /// - Parameters:
    ///   - error: Why the frame was refused.
    ///   - channel: The header's channel if it is a valid name, else empty (a hostile name is
    ///     neither kept nor echoed).
    ///   - track: The header's track kind, if known.
    ///   - session: The sending client connection.
    ///   - now: The current clock value.
    /// - Returns: The error event for the sender (nothing for a session the plane does not know,
    ///   or within the reporting interval).
    public mutating func refuseFrame(
        _ error: ShowroomError, channel: String, track: TrackKind?, from session: SessionID, now: Duration
    ) -> [EdgeDirective] {
        statistics.framesReceived += 1
        statistics.framesRefused += 1
        guard sessions[session] != nil else { return [] }
        touch(session, now: now)
        let channel = Names.isValidChannel(channel) ? channel : ""
        var out: [EdgeDirective] = []
        reportRefusal(error, to: session, channel: channel, track: track, now: now, &out)
        if !out.isEmpty {
            out.append(.log(EdgeLogEntry(.warning, "frame from session \(session) refused: \(error)")))
        }
        return out
    }

    /// Why a frame was not forwarded, reported to its sender (rate-limited).
    mutating func refuseFrame(_ info: MediaFrameInfo, from session: SessionID, now: Duration) -> [EdgeDirective] {
        statistics.framesRefused += 1
        let limit = settings.limits.maxFrameBytes
        let error: ShowroomError
        if info.payloadSize > limit {
            error = .frameTooLarge("a \(info.payloadSize)-byte frame exceeds the edge's limit of \(limit) bytes; lower the bitrate or resolution")
        } else if let connection = channels[info.channel]?.connections[session] {
            if let kind = info.kind {
                if connection.role == .audience {
                    error = .roleForbidsPublish("uid \(connection.uid) is audience in channel \(info.channel) and cannot publish \(kind); switch to broadcaster first")
                } else if info.publisherUID != connection.uid {
                    error = .invalidArgument("the frame header says uid \(info.publisherUID) but this connection to channel \(info.channel) is uid \(connection.uid)")
                } else if let ban = activeBan(channel: info.channel, uid: connection.uid, of: session, now: now), ban.bansPublishing(kind) {
                    error = publishBanned(ban, kind)
                } else if !connection.options.publishes(kind) {
                    error = .trackNotPublished("the media options of channel \(info.channel) do not publish \(kind); set publish_\(kind) first")
                } else if let refusal = connection.grant.refusal(of: .publish(kind), at: now, for: "publish \(kind) in channel \(info.channel)") {
                    error = refusal
                } else {
                    error = .internal("the \(kind) track of uid \(connection.uid) in channel \(info.channel) is allowed but not published")
                }
            } else {
                error = .unknownTrack("the frame's track kind is neither audio nor video")
            }
        } else {
            error = notJoined(info.channel)
        }
        var out: [EdgeDirective] = []
        reportRefusal(error, to: session, channel: info.channel, track: info.kind, now: now, &out)
        if !out.isEmpty {
            out.append(.log(EdgeLogEntry(.warning, "frame from session \(session) refused: \(error)")))
        }
        return out
    }
}
