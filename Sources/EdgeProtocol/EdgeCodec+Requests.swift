#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShowroomWire

extension EdgeCodec {
    /// Decodes a client's request (edge side).
    ///
    /// - Parameter envelope: A request envelope of one of the edge's request kinds.
    /// - Returns: The request, with the proto defaults applied.
    /// - Throws: `UNKNOWN_KIND` for a kind that is not an edge request, `MALFORMED_MESSAGE` for a
    ///   body that does not decode, `INVALID_ARGUMENT` for a channel name outside
    ///   ``Names/channelRule`` (checked before anything else) or a missing role in
    ///   `SET_CLIENT_ROLE`, `UNKNOWN_TRACK` for a track kind neither audio nor video.
    public static func request(from envelope: WireEnvelope) throws(ShowroomError) -> EdgeRequest {
        guard let kind = requestKind(of: envelope.kind), !envelope.isResponse else {
            throw .unknownKind("an edge does not handle \(envelope.isResponse ? "responses of kind" : "message kind") \(envelope.kind)")
        }
        switch kind {
        case .openSession:
            let body = try envelope.decodeBody(EdgeOpenSessionRequest.self)
            return .openSession(clientID: body.clientID, sdkVersion: body.sdkVersion)
        case .closeSession:
            _ = try envelope.decodeBody(EdgeCloseSessionRequest.self)
            return .closeSession
        case .heartbeat:
            return .heartbeat(clientTime: try envelope.decodeBody(EdgeHeartbeatRequest.self).clientTimeUs)
        case .join:
            let body = try envelope.decodeBody(EdgeJoinChannelRequest.self)
            try Names.validateChannel(body.channel)
            let update = Self.update(body.options)
            let role = update.role ?? .audience
            return .join(channel: body.channel, uid: body.uid, token: body.token, role: role,
                         options: MediaOptions.defaults(for: role).applying(update))
        case .leave:
            let body = try envelope.decodeBody(EdgeLeaveChannelRequest.self)
            try Names.validateChannel(body.channel)
            return .leave(channel: body.channel)
        case .updateOptions:
            let body = try envelope.decodeBody(EdgeUpdateChannelOptionsRequest.self)
            try Names.validateChannel(body.channel)
            return .updateOptions(channel: body.channel, update: Self.update(body.options))
        case .setRole:
            let body = try envelope.decodeBody(EdgeSetClientRoleRequest.self)
            try Names.validateChannel(body.channel)
            guard let role = role(body.role) else {
                throw .invalidArgument("SET_CLIENT_ROLE needs role broadcaster or audience, got \(body.role.rawValue)")
            }
            return .setRole(channel: body.channel, role: role)
        case .renewToken:
            let body = try envelope.decodeBody(EdgeRenewChannelTokenRequest.self)
            try Names.validateChannel(body.channel)
            return .renewToken(channel: body.channel, token: body.token)
        case .preload:
            let body = try envelope.decodeBody(EdgePreloadChannelRequest.self)
            try Names.validateChannel(body.channel)
            return .preload(channel: body.channel, uid: body.uid, token: body.token)
        case .subscribe:
            let body = try envelope.decodeBody(EdgeSubscribeTrackRequest.self)
            try Names.validateChannel(body.channel)
            return .subscribe(TrackID(channel: body.channel, uid: body.uid, kind: try requiredTrackKind(body.track)))
        case .unsubscribe:
            let body = try envelope.decodeBody(EdgeUnsubscribeTrackRequest.self)
            try Names.validateChannel(body.channel)
            return .unsubscribe(TrackID(channel: body.channel, uid: body.uid, kind: try requiredTrackKind(body.track)))
        case .muteRemote:
            let body = try envelope.decodeBody(EdgeMuteRemoteTrackRequest.self)
            try Names.validateChannel(body.channel)
            return .muteRemote(TrackID(channel: body.channel, uid: body.uid, kind: try requiredTrackKind(body.track)), muted: body.muted)
        case .enableVolumeIndication:
            let body = try envelope.decodeBody(EdgeEnableVolumeIndicationRequest.self)
            guard body.intervalMs > 0 else { return .enableVolumeIndication(nil) }
            return .enableVolumeIndication(VolumeIndicationConfig(
                interval: .milliseconds(Int64(body.intervalMs)), smoothing: Int(body.smoothing), reportVAD: body.reportVad))
        case .sendStreamMessage:
            let body = try envelope.decodeBody(EdgeSendStreamMessageRequest.self)
            try Names.validateChannel(body.channel)
            return .sendStreamMessage(channel: body.channel, streamID: body.streamID, data: [UInt8](body.data))
        }
    }

    /// Encodes a request (client side).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - requestID: Its id; 0 sends it one-way (no response).
    /// - Returns: The envelope.
    public static func envelope(request: EdgeRequest, id requestID: UInt64) throws(ShowroomError) -> WireEnvelope {
        let kind = messageKind(of: request.kind)
        switch request {
        case .openSession(let clientID, let sdkVersion):
            var body = EdgeOpenSessionRequest()
            body.clientID = clientID
            body.sdkVersion = sdkVersion
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .closeSession:
            return try WireEnvelope(request: kind, id: requestID, body: EdgeCloseSessionRequest())
        case .heartbeat(let clientTime):
            var body = EdgeHeartbeatRequest()
            body.clientTimeUs = clientTime
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .join(let channel, let uid, let token, let role, let options):
            var body = EdgeJoinChannelRequest()
            body.channel = channel
            body.uid = uid
            body.token = token
            body.options = wire(MediaOptionsUpdate(
                role: role, publishAudio: options.publishAudio, publishVideo: options.publishVideo,
                publishData: options.publishData, autoSubscribeAudio: options.autoSubscribeAudio,
                autoSubscribeVideo: options.autoSubscribeVideo))
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .leave(let channel):
            var body = EdgeLeaveChannelRequest()
            body.channel = channel
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .updateOptions(let channel, let update):
            var body = EdgeUpdateChannelOptionsRequest()
            body.channel = channel
            body.options = wire(update)
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .setRole(let channel, let role):
            var body = EdgeSetClientRoleRequest()
            body.channel = channel
            body.role = wire(role)
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .renewToken(let channel, let token):
            var body = EdgeRenewChannelTokenRequest()
            body.channel = channel
            body.token = token
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .preload(let channel, let uid, let token):
            var body = EdgePreloadChannelRequest()
            body.channel = channel
            body.uid = uid
            body.token = token
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .subscribe(let track):
            var body = EdgeSubscribeTrackRequest()
            body.channel = track.channel
            body.uid = track.uid
            body.track = wire(track.kind)
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .unsubscribe(let track):
            var body = EdgeUnsubscribeTrackRequest()
            body.channel = track.channel
            body.uid = track.uid
            body.track = wire(track.kind)
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .muteRemote(let track, let muted):
            var body = EdgeMuteRemoteTrackRequest()
            body.channel = track.channel
            body.uid = track.uid
            body.track = wire(track.kind)
            body.muted = muted
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .enableVolumeIndication(let config):
            var body = EdgeEnableVolumeIndicationRequest()
            if let config {
                body.intervalMs = max(1, milliseconds(config.interval))
                body.smoothing = UInt32(clamping: config.smoothing)
                body.reportVad = config.reportVAD
            }
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .sendStreamMessage(let channel, let streamID, let data):
            var body = EdgeSendStreamMessageRequest()
            body.channel = channel
            body.streamID = streamID
            body.data = Data(data)
            return try WireEnvelope(request: kind, id: requestID, body: body)
        }
    }

    static func update(_ wire: EdgeMediaOptions) -> MediaOptionsUpdate {
        MediaOptionsUpdate(
            role: role(wire.clientRole),
            publishAudio: wire.hasPublishAudio ? wire.publishAudio : nil,
            publishVideo: wire.hasPublishVideo ? wire.publishVideo : nil,
            publishData: wire.hasPublishData ? wire.publishData : nil,
            autoSubscribeAudio: wire.hasAutoSubscribeAudio ? wire.autoSubscribeAudio : nil,
            autoSubscribeVideo: wire.hasAutoSubscribeVideo ? wire.autoSubscribeVideo : nil)
    }

    static func wire(_ update: MediaOptionsUpdate) -> EdgeMediaOptions {
        var options = EdgeMediaOptions()
        if let role = update.role { options.clientRole = wire(role) }
        if let value = update.publishAudio { options.publishAudio = value }
        if let value = update.publishVideo { options.publishVideo = value }
        if let value = update.publishData { options.publishData = value }
        if let value = update.autoSubscribeAudio { options.autoSubscribeAudio = value }
        if let value = update.autoSubscribeVideo { options.autoSubscribeVideo = value }
        return options
    }
}
