import ShowroomWire

extension EdgeCodec {
    /// Encodes a reply as the response envelope (edge side): same kind and request id as the
    /// request; a failure sets `error` and leaves the body empty.
    ///
    /// - Parameter reply: The reply from `EdgeDirective.reply(_:to:)`.
    /// - Returns: The envelope.
    public static func envelope(reply: EdgeReply) throws(ShowroomError) -> WireEnvelope {
        let kind = messageKind(of: reply.kind)
        let body: EdgeReplyBody
        switch reply.result {
        case .failure(let error):
            return WireEnvelope(responseTo: requestHeader(kind, reply.requestID), error: error)
        case .success(let success):
            body = success
        }
        let id = reply.requestID
        switch body {
        case .sessionOpened(let session, let interval, let timeout, let limits):
            var message = EdgeOpenSessionResponse()
            message.sessionID = session.rawValue
            message.heartbeatIntervalMs = milliseconds(interval)
            message.heartbeatTimeoutMs = milliseconds(timeout)
            message.limits.maxFrameBytes = UInt32(clamping: limits.maxFrameBytes)
            message.limits.maxChannels = UInt32(clamping: limits.maxChannelsPerSession)
            message.limits.maxStreamMessageBytes = UInt32(clamping: limits.maxStreamMessageBytes)
            message.limits.maxStreamMessagesPerSecond = UInt32(clamping: limits.maxStreamMessagesPerSecond)
            message.limits.maxStreamMessageBytesPerSecond = UInt32(clamping: limits.maxStreamMessageBytesPerSecond)
            message.limits.maxMessageBytes = UInt32(clamping: limits.maxMessageBytes)
            message.limits.maxChannelNameBytes = UInt32(clamping: Names.maxChannelNameBytes)
            return try response(kind, id, message)
        case .sessionClosed:
            return try response(kind, id, EdgeCloseSessionResponse())
        case .heartbeat(let clientTime):
            var message = EdgeHeartbeatResponse()
            message.clientTimeUs = clientTime
            return try response(kind, id, message)
        case .joined(let channel, let uid, let connection, let role):
            var message = EdgeJoinChannelResponse()
            message.channel = channel
            message.uid = uid
            message.connectionID = connection.rawValue
            message.role = wire(role)
            return try response(kind, id, message)
        case .left(let channel):
            var message = EdgeLeaveChannelResponse()
            message.channel = channel
            return try response(kind, id, message)
        case .optionsUpdated(let channel):
            var message = EdgeUpdateChannelOptionsResponse()
            message.channel = channel
            return try response(kind, id, message)
        case .roleSet(let channel, let role):
            var message = EdgeSetClientRoleResponse()
            message.channel = channel
            message.role = wire(role)
            return try response(kind, id, message)
        case .tokenRenewed(let channel):
            var message = EdgeRenewChannelTokenResponse()
            message.channel = channel
            return try response(kind, id, message)
        case .preloaded(let channel, let kept):
            var message = EdgePreloadChannelResponse()
            message.channel = channel
            message.keptMs = UInt32(clamping: kept.components.seconds * 1000 + kept.components.attoseconds / 1_000_000_000_000_000)
            return try response(kind, id, message)
        case .done:
            switch reply.kind {
            case .subscribe: return try response(kind, id, EdgeSubscribeTrackResponse())
            case .unsubscribe: return try response(kind, id, EdgeUnsubscribeTrackResponse())
            case .muteRemote: return try response(kind, id, EdgeMuteRemoteTrackResponse())
            case .enableVolumeIndication: return try response(kind, id, EdgeEnableVolumeIndicationResponse())
            default: throw .internal("no response body \"done\" for \(reply.kind)")
            }
        case .streamMessageSent(let sequence):
            var message = EdgeSendStreamMessageResponse()
            message.sequence = sequence
            return try response(kind, id, message)
        }
    }

    /// Decodes a response envelope (client side).
    ///
    /// - Parameter envelope: A response to one of the edge's request kinds.
    /// - Returns: The reply; a failed response becomes a reply with a failure.
    public static func reply(from envelope: WireEnvelope) throws(ShowroomError) -> EdgeReply {
        guard envelope.isResponse, let kind = requestKind(of: envelope.kind) else {
            throw .unknownKind("not a response to an edge request: kind \(envelope.kind)")
        }
        if let failure = envelope.failure {
            return EdgeReply(requestID: envelope.requestID, kind: kind, result: .failure(failure))
        }
        let body: EdgeReplyBody
        switch kind {
        case .openSession:
            let message = try envelope.decodeBody(EdgeOpenSessionResponse.self)
            let limits = EdgeLimits(
                maxFrameBytes: Int(message.limits.maxFrameBytes), maxChannelsPerSession: Int(message.limits.maxChannels),
                maxStreamMessageBytes: Int(message.limits.maxStreamMessageBytes),
                maxStreamMessagesPerSecond: Int(message.limits.maxStreamMessagesPerSecond),
                maxStreamMessageBytesPerSecond: Int(message.limits.maxStreamMessageBytesPerSecond),
                // 0 is an edge from before the field: assume this build's default.
                maxMessageBytes: message.limits.maxMessageBytes == 0 ? EdgeLimits().maxMessageBytes : Int(message.limits.maxMessageBytes))
            body = .sessionOpened(
                session: SessionID(message.sessionID), heartbeatInterval: .milliseconds(Int64(message.heartbeatIntervalMs)),
                heartbeatTimeout: .milliseconds(Int64(message.heartbeatTimeoutMs)), limits: limits)
        case .closeSession:
            _ = try envelope.decodeBody(EdgeCloseSessionResponse.self)
            body = .sessionClosed
        case .heartbeat:
            body = .heartbeat(clientTime: try envelope.decodeBody(EdgeHeartbeatResponse.self).clientTimeUs)
        case .join:
            let message = try envelope.decodeBody(EdgeJoinChannelResponse.self)
            body = .joined(channel: message.channel, uid: message.uid, connection: ConnectionID(message.connectionID), role: role(message.role) ?? .audience)
        case .leave:
            body = .left(channel: try envelope.decodeBody(EdgeLeaveChannelResponse.self).channel)
        case .updateOptions:
            body = .optionsUpdated(channel: try envelope.decodeBody(EdgeUpdateChannelOptionsResponse.self).channel)
        case .setRole:
            let message = try envelope.decodeBody(EdgeSetClientRoleResponse.self)
            body = .roleSet(channel: message.channel, role: role(message.role) ?? .audience)
        case .renewToken:
            body = .tokenRenewed(channel: try envelope.decodeBody(EdgeRenewChannelTokenResponse.self).channel)
        case .preload:
            let message = try envelope.decodeBody(EdgePreloadChannelResponse.self)
            body = .preloaded(channel: message.channel, kept: .milliseconds(Int64(message.keptMs)))
        case .subscribe, .unsubscribe, .muteRemote, .enableVolumeIndication:
            body = .done
        case .sendStreamMessage:
            body = .streamMessageSent(sequence: try envelope.decodeBody(EdgeSendStreamMessageResponse.self).sequence)
        }
        return EdgeReply(requestID: envelope.requestID, kind: kind, result: .success(body))
    }
}
