#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShowroomWire

extension EdgeCodec {
    /// Encodes an event as a one-way envelope (edge side).
    ///
    /// - Parameter event: The event from `EdgeDirective.send(_:to:)`.
    /// - Returns: The envelope.
    public static func envelope(event: EdgeEvent) throws(ShowroomError) -> WireEnvelope {
        switch event {
        case .userJoined(let channel, let uid):
            var body = EdgeUserJoined()
            body.channel = channel
            body.uid = uid
            return try WireEnvelope(request: .channelUserJoined, id: 0, body: body)
        case .userOffline(let channel, let uid, let reason):
            var body = EdgeUserOffline()
            body.channel = channel
            body.uid = uid
            body.reason = wire(reason)
            return try WireEnvelope(request: .channelUserOffline, id: 0, body: body)
        case .remoteTrackPublished(let track):
            var body = EdgeRemoteTrackPublished()
            body.channel = track.channel
            body.uid = track.uid
            body.track = wire(track.kind)
            return try WireEnvelope(request: .remoteTrackPublished, id: 0, body: body)
        case .remoteTrackUnpublished(let track):
            var body = EdgeRemoteTrackUnpublished()
            body.channel = track.channel
            body.uid = track.uid
            body.track = wire(track.kind)
            return try WireEnvelope(request: .remoteTrackUnpublished, id: 0, body: body)
        case .remoteVideoStateChanged(let track, let state, let reason):
            var body = EdgeRemoteVideoStateChanged()
            body.channel = track.channel
            body.uid = track.uid
            body.state = wire(state)
            body.reason = wire(reason)
            return try WireEnvelope(request: .remoteVideoStateChanged, id: 0, body: body)
        case .volumeIndication(let channel, let speakers):
            var body = EdgeVolumeIndication()
            body.channel = channel
            body.speakers = speakers.map { speaker in
                var entry = EdgeSpeakerVolume()
                entry.uid = speaker.uid
                entry.volume = UInt32(clamping: speaker.volume)
                entry.voiceActive = speaker.voiceActive
                return entry
            }
            return try WireEnvelope(request: .volumeIndication, id: 0, body: body)
        case .streamMessage(let channel, let uid, let streamID, let sequence, let data):
            var body = EdgeStreamMessage()
            body.channel = channel
            body.uid = uid
            body.streamID = streamID
            body.sequence = sequence
            body.data = Data(data)
            return try WireEnvelope(request: .streamMessage, id: 0, body: body)
        case .tokenWillExpire(let channel, let expiresIn):
            var body = EdgeTokenWillExpire()
            body.channel = channel
            body.expiresInMs = milliseconds(expiresIn)
            return try WireEnvelope(request: .channelTokenWillExpire, id: 0, body: body)
        case .privilegeExpired(let channel, let privilege):
            var body = EdgePrivilegeExpired()
            body.channel = channel
            body.privilege = wire(privilege)
            return try WireEnvelope(request: .channelPrivilegeExpired, id: 0, body: body)
        case .connectionClosed(let channel, let reason):
            var body = EdgeConnectionClosed()
            body.channel = channel
            body.reason = reason.wire
            return try WireEnvelope(request: .channelConnectionClosed, id: 0, body: body)
        case .sessionClosed(let reason):
            var body = EdgeSessionClosed()
            body.reason = reason.wire
            return try WireEnvelope(request: .edgeSessionClosed, id: 0, body: body)
        case .draining(let within):
            var body = EdgeDraining()
            body.withinMs = milliseconds(within)
            return try WireEnvelope(request: .edgeDraining, id: 0, body: body)
        case .error(let error, let channel, let track):
            var body = EdgeErrorNotice()
            body.channel = channel
            body.error = error.wire
            if let track { body.track = wire(track) }
            return try WireEnvelope(request: .edgeError, id: 0, body: body)
        case .forwardStateChanged(let change):
            return try WireEnvelope(request: .forwardStateChanged, id: 0, body: wire(change))
        }
    }

    /// `EDGE_MOVED_OUT` (client side, one-way): everything of the session that moves off the
    /// draining edge has moved.
    public static func movedOut() throws(ShowroomError) -> WireEnvelope {
        try WireEnvelope(request: .edgeMovedOut, id: 0, body: EdgeMovedOut())
    }

    /// Decodes an event (client side).
    ///
    /// - Parameter envelope: A one-way envelope of one of the edge's event kinds (not
    ///   `KEYFRAME_REQUEST`: see ``keyframeRequest(from:uid:)``).
    /// - Returns: The event.
    public static func event(from envelope: WireEnvelope) throws(ShowroomError) -> EdgeEvent {
        switch envelope.kind {
        case .channelUserJoined:
            let body = try envelope.decodeBody(EdgeUserJoined.self)
            return .userJoined(channel: body.channel, uid: body.uid)
        case .channelUserOffline:
            let body = try envelope.decodeBody(EdgeUserOffline.self)
            return .userOffline(channel: body.channel, uid: body.uid, reason: offlineReason(body.reason))
        case .remoteTrackPublished:
            let body = try envelope.decodeBody(EdgeRemoteTrackPublished.self)
            return .remoteTrackPublished(TrackID(channel: body.channel, uid: body.uid, kind: try requiredTrackKind(body.track)))
        case .remoteTrackUnpublished:
            let body = try envelope.decodeBody(EdgeRemoteTrackUnpublished.self)
            return .remoteTrackUnpublished(TrackID(channel: body.channel, uid: body.uid, kind: try requiredTrackKind(body.track)))
        case .remoteVideoStateChanged:
            let body = try envelope.decodeBody(EdgeRemoteVideoStateChanged.self)
            return .remoteVideoStateChanged(
                TrackID(channel: body.channel, uid: body.uid, kind: .video), state: try videoState(body.state),
                reason: try videoStateReason(body.reason))
        case .volumeIndication:
            let body = try envelope.decodeBody(EdgeVolumeIndication.self)
            return .volumeIndication(
                channel: body.channel,
                speakers: body.speakers.map { SpeakerVolume(uid: $0.uid, volume: Int($0.volume), voiceActive: $0.voiceActive) })
        case .streamMessage:
            let body = try envelope.decodeBody(EdgeStreamMessage.self)
            return .streamMessage(channel: body.channel, uid: body.uid, streamID: body.streamID, sequence: body.sequence, data: [UInt8](body.data))
        case .channelTokenWillExpire:
            let body = try envelope.decodeBody(EdgeTokenWillExpire.self)
            return .tokenWillExpire(channel: body.channel, expiresIn: .milliseconds(Int64(body.expiresInMs)))
        case .channelPrivilegeExpired:
            let body = try envelope.decodeBody(EdgePrivilegeExpired.self)
            return .privilegeExpired(channel: body.channel, privilege: try privilege(body.privilege))
        case .channelConnectionClosed:
            let body = try envelope.decodeBody(EdgeConnectionClosed.self)
            return .connectionClosed(channel: body.channel, reason: ShowroomError(wire: body.reason))
        case .edgeSessionClosed:
            let body = try envelope.decodeBody(EdgeSessionClosed.self)
            return .sessionClosed(reason: ShowroomError(wire: body.reason))
        case .edgeDraining:
            let body = try envelope.decodeBody(EdgeDraining.self)
            return .draining(within: .milliseconds(Int64(body.withinMs)))
        case .edgeError:
            let body = try envelope.decodeBody(EdgeErrorNotice.self)
            return .error(ShowroomError(wire: body.error), channel: body.channel, track: trackKind(body.track))
        case .forwardStateChanged:
            return .forwardStateChanged(forwardStateChange(try envelope.decodeBody(EdgeForwardStateChanged.self)))
        default:
            throw .unknownKind("\(envelope.kind) is not an edge event")
        }
    }
}
