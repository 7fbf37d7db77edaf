internal import EdgeProtocol
internal import ShowroomWire

// What comes from an edge: responses, events, keyframe requests and media frames.

extension EngineShell {
    /// One message from the edge of `session`: hearing anything counts for the session's
    /// heartbeat, noted once per batch the host read at once (not per media frame).
    func receive(_ message: any EngineMessage, on session: SessionLink, firstOfBatch: Bool) {
        if firstOfBatch {
            let recovered = state.heard(session.serial, now: host.now)
            if !recovered.isEmpty { perform(recovered) }
        }
        guard message.count >= 1,
              let envelope = try? message.withBytes(of: 0, { (bytes) throws(ShowroomError) in try WireEnvelope.decode(frame: bytes) })
        else {
            mediaStatistics.framesDiscarded += 1
            return
        }
        if envelope.kind == .mediaFrame {
            receiveMedia(envelope, message, from: session)
        } else if envelope.isResponse {
            receiveReply(envelope, on: session)
        } else if envelope.kind == .keyframeRequest {
            mediaStatistics.keyframeRequests += 1
            wantKeyframe()
        } else {
            receiveEvent(envelope, on: session)
        }
    }

    private func receiveReply(_ envelope: WireEnvelope, on session: SessionLink) {
        // Heartbeat answers and late answers have no waiter: hearing them was the point.
        guard let pending = session.pending.removeValue(forKey: envelope.requestID) else { return }
        host.cancel(pending.timer)
        pending.complete(.success(envelope))
    }

    private func receiveMedia(_ envelope: WireEnvelope, _ message: any EngineMessage, from session: SessionLink) {
        guard message.count >= 2, let header = try? envelope.decodeBody(WireMediaHeader.self) else {
            mediaStatistics.framesDiscarded += 1
            return
        }
        // During a move both edges send the channel's frames: one stream reaches the sinks.
        let connection: ChannelConnection
        let joinStarted: ContinuousClock.Instant
        switch state.mediaArrived(channel: header.channel, from: session.serial, isKeyframe: header.track == .video && header.keyframe) {
        case .drop:
            if state.connections[header.channel]?.isJoined != true { mediaStatistics.framesDiscarded += 1 }
            return
        case .accept(let accepted, let started):
            (connection, joinStarted) = (accepted, started)
        case .acceptAfterSwitch(let directives, let accepted, let started):
            (connection, joinStarted) = (accepted, started)
            perform(directives)
        }
        let now = host.now  // one clock reading per frame
        let received = host.microseconds(at: now)
        message.withBytes(of: 1) { payload in
            let frame = RemoteMediaFrame(
                connection: connection, uid: header.publisherUid, sequence: header.sequence,
                captureTimeMicroseconds: header.captureTimeUs, sendTimeMicroseconds: header.sendTimeUs,
                receiveTimeMicroseconds: received,
                isKeyframe: header.keyframe, width: Int(header.width), height: Int(header.height),
                audioLevel: Int(header.audioLevel), payload: payload)
            switch header.track {
            case .video:
                mediaStatistics.videoFramesReceived += 1
                guard let entry = videoSinks[header.channel]?[header.publisherUid] else {
                    // No sink yet: keep the GOP for the one the app will set.
                    pendingVideo[header.channel, default: PendingVideo()].keep(frame)
                    return
                }
                deliver(frame, to: entry.sink, channel: header.channel, since: max(joinStarted, entry.since), now: now)
            case .audio:
                mediaStatistics.audioFramesReceived += 1
                audioSinks[header.channel]?[header.publisherUid]?.consume(frame)
            default:
                mediaStatistics.framesDiscarded += 1
            }
        }
    }

    /// Hands a frame to its sink and reports the first one it decodes, timed from `since`.
    func deliver(_ frame: RemoteMediaFrame, to sink: any RemoteVideoSink, channel: String,
                 since: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        guard case .decoded(let width, let height) = sink.consume(frame),
              state.connections[channel]?.firstFrameReported.insert(frame.uid).inserted == true,
              let connection = state.connections[channel]?.connection
        else { return }
        emit(.firstRemoteVideoFrameDecoded(connection, uid: frame.uid, width: width, height: height, elapsedSinceJoin: since.duration(to: now)))
    }

    private func receiveEvent(_ envelope: WireEnvelope, on session: SessionLink) {
        let event: EdgeEvent
        do throws(ShowroomError) {
            event = try EdgeCodec.event(from: envelope)
        } catch {
            emit(.error(nil, error))
            return
        }
        perform(state.edgeEvent(event, on: session.serial, now: host.now))
    }
}
