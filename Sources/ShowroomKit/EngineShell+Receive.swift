#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

// What comes from an edge: responses, events, keyframe requests and media frames.

extension EngineShell {
    /// Messages handled per readiness callback before the loop serves its other sockets (many
    /// engines may share the loop); the rest wait for the next poll, which returns at once.
    static var receiveBatch: Int { 256 }

    func receive(on session: EdgeSession) {
        let buffer = session.receiveBuffer
        var handled = 0
        while handled < Self.receiveBatch, session.phase != .closed {
            let received: Bool
            do { received = try session.socket.receive(into: buffer) } catch { return }
            guard received else { return }
            handled += 1
            if handled == 1 { noteHeard(session) }
            guard buffer.count >= 1,
                  let envelope = try? buffer.withBytes(of: 0, { (bytes) throws(ShowroomError) in try WireEnvelope.decode(frame: bytes) })
            else {
                statistics.framesDiscarded += 1
                continue
            }
            if envelope.kind == .mediaFrame {
                receiveMedia(envelope, buffer, from: session)
            } else if envelope.isResponse {
                receiveReply(envelope, on: session)
            } else if envelope.kind == .keyframeRequest {
                statistics.keyframeRequests += 1
                wantKeyframe()
            } else {
                receiveEvent(envelope, on: session)
            }
        }
    }

    private func noteHeard(_ session: EdgeSession) {
        session.lastHeard = .now
        if session.isInterrupted {
            session.isInterrupted = false
            setState(.connected, .recovered, channelsOf: session)
        }
    }

    private func receiveReply(_ envelope: WireEnvelope, on session: EdgeSession) {
        // Heartbeat answers and late answers have no waiter: hearing them was the point.
        guard let pending = session.pending.removeValue(forKey: envelope.requestID) else { return }
        loop.cancelTimer(pending.timer)
        pending.complete(.success(envelope))
    }

    private func receiveMedia(_ envelope: WireEnvelope, _ buffer: Multipart, from session: EdgeSession) {
        guard buffer.count >= 2, let header = try? envelope.decodeBody(WireMediaHeader.self),
              let record = connections[header.channel], record.isJoined
        else {
            statistics.framesDiscarded += 1
            return
        }
        // During a move both edges send the channel's frames: one stream reaches the sinks.
        guard acceptsMedia(from: session, for: record, isKeyframe: header.track == .video && header.keyframe) else { return }
        let now = ContinuousClock.now
        buffer.withBytes(of: 1) { payload in
            let frame = RemoteMediaFrame(
                connection: record.connection, uid: header.publisherUid, sequence: header.sequence,
                captureTimeMicroseconds: header.captureTimeUs, sendTimeMicroseconds: header.sendTimeUs,
                receiveTimeMicroseconds: MediaClock.microseconds(at: now),
                isKeyframe: header.keyframe, width: Int(header.width), height: Int(header.height),
                audioLevel: Int(header.audioLevel), payload: payload)
            switch header.track {
            case .video:
                statistics.videoFramesReceived += 1
                guard let entry = videoSinks[header.channel]?[header.publisherUid] else {
                    // No sink yet: keep the GOP for the one the app will set.
                    pendingVideo[header.channel, default: PendingVideo()].keep(frame)
                    return
                }
                deliver(frame, to: entry.sink, record: record, since: max(record.joinStarted, entry.since), now: now)
            case .audio:
                statistics.audioFramesReceived += 1
                audioSinks[header.channel]?[header.publisherUid]?.consume(frame)
            default:
                statistics.framesDiscarded += 1
            }
        }
    }

    /// Hands a frame to its sink and reports the first one it decodes, timed from `since`.
    func deliver(_ frame: RemoteMediaFrame, to sink: any RemoteVideoSink, record: ConnectionRecord,
                 since: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        if case .decoded(let width, let height) = sink.consume(frame), record.firstFrameReported.insert(frame.uid).inserted {
            emit(.firstRemoteVideoFrameDecoded(record.connection, uid: frame.uid, width: width, height: height,
                                               elapsedSinceJoin: since.duration(to: now)))
        }
    }

    private func receiveEvent(_ envelope: WireEnvelope, on session: EdgeSession) {
        let event: EdgeEvent
        do throws(ShowroomError) {
            event = try EdgeCodec.event(from: envelope)
        } catch {
            emit(.error(nil, error))
            return
        }
        // A channel's events count from the edge that serves its connection (during a move, the
        // other edge's are about the same users and tracks).
        func current(_ channel: String) -> ConnectionRecord? {
            guard let record = connections[channel], record.edgeEndpoint == session.edge.endpoint else { return nil }
            return record
        }
        switch event {
        case .userJoined(let channel, let uid):
            guard let record = current(channel) else { return }
            emit(.userJoined(record.connection, uid: uid))
        case .userOffline(let channel, let uid, let reason):
            guard let record = current(channel) else { return }
            record.firstFrameReported.remove(uid)
            pendingVideo[channel]?.forget(uid)
            emit(.userOffline(record.connection, uid: uid, reason: UserOfflineReason(reason)))
        case .remoteTrackPublished(let track):
            guard let record = current(track.channel) else { return }
            emit(.remoteTrackPublished(record.connection, uid: track.uid, track: TrackKind(track.kind)))
        case .remoteTrackUnpublished(let track):
            guard let record = current(track.channel) else { return }
            if track.kind == .video {
                record.firstFrameReported.remove(track.uid)
                pendingVideo[track.channel]?.forget(track.uid)
            }
            emit(.remoteTrackUnpublished(record.connection, uid: track.uid, track: TrackKind(track.kind)))
        case .remoteVideoStateChanged(let track, let state, let reason):
            guard let record = current(track.channel) else { return }
            emit(.remoteVideoStateChanged(
                record.connection, uid: track.uid, state: RemoteVideoState(state), reason: RemoteVideoStateReason(reason)))
        case .volumeIndication(let channel, let speakers):
            guard let record = current(channel) else { return }
            emit(.volumeIndication(record.connection, speakers: speakers.map(SpeakerVolume.init)))
        case .streamMessage(let channel, let uid, let streamID, let sequence, let data):
            guard let record = current(channel) else { return }
            emit(.streamMessage(record.connection, uid: uid, streamID: streamID, sequence: sequence, data: data))
        case .tokenWillExpire(let channel, let expiresIn):
            guard let record = current(channel) else { return }
            emit(.tokenWillExpire(record.connection, expiresIn: expiresIn))
        case .privilegeExpired(let channel, let privilege):
            guard let record = current(channel) else { return }
            emit(.privilegeExpired(record.connection, privilege: Privilege(privilege)))
        case .connectionClosed(let channel, let reason):
            guard current(channel) != nil, let record = connections.removeValue(forKey: channel) else {
                // A connection that lives on another edge now: only this edge's part of it ended.
                session.channels.remove(channel)
                return releaseIfUnused(session)
            }
            session.channels.remove(channel)
            forget(channel)
            emit(.connectionClosed(record.connection, error: reason))
            setState(.failed, .closedByEdge(reason), of: record)
            refreshPublishing()
            releaseIfUnused(session)
        case .sessionClosed(let reason):
            guard session.phase == .open else { return }
            // A draining edge (UNAVAILABLE: join again through the cluster) or one that timed the
            // session out: the channels go on elsewhere. A replaced session stays closed.
            if reason.code == .unavailable || reason.code == .sessionTimedOut {
                return edgeFailed(session, error: reason)
            }
            closeConnections(of: session, state: .failed, reason: .closedByEdge(reason), error: reason)
            teardown(session, error: reason)
        case .draining(let within):
            edgeDraining(session, within: within)
        case .error(let error, let channel, _):
            emit(.error(connections[channel]?.connection, error))
        case .forwardStateChanged(let change):
            guard let record = current(change.channel) else { return }
            emit(.forwardStateChanged(record.connection, destination: ForwardDestinationStatus(change.destination)))
        }
    }
}
