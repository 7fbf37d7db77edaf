import ShowroomWire

// Data between users: stream messages; and the volume indication switch.

extension ChannelPlane {
    /// Sends a stream message to every other user of the channel (`sendStreamMessage`), in the
    /// order received, numbered per sender connection and stream from 1 so receivers can tell a
    /// gap.
    ///
    /// - Parameters:
    ///   - session: The sending client connection.
    ///   - requestID: The request's id (0: no reply; a refusal then comes as an error event).
    ///   - name: The channel.
    ///   - streamID: The sender's stream (`createDataStream`).
    ///   - data: The message.
    ///   - now: The current clock value.
    /// - Returns: The message to each receiver and the reply with its sequence number. Refusals:
    ///   `NOT_JOINED`, `ROLE_FORBIDS_PUBLISH` (audience), `TRACK_NOT_PUBLISHED` (publish_data not
    ///   set), `TOKEN_MISSING_PRIVILEGE` / `PRIVILEGE_EXPIRED` (publish-data), `STREAM_MESSAGE_TOO_LARGE`,
    ///   `STREAM_MESSAGE_RATE_LIMITED`.
    public mutating func sendStreamMessage(
        _ session: SessionID, requestID: UInt64 = 0, channel name: String, streamID: UInt32, data: [UInt8], now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard var channel = joinedChannel(session, name, .sendStreamMessage, requestID: requestID, now: now, &out) else { return out }
        defer { store(channel, now: now, &out) }
        let connection = channel.connections[session]!
        let limits = settings.limits
        // A new rate window every second.
        let windowOpen = now - connection.messageWindowStart < .seconds(1)
        let messages = windowOpen ? connection.messagesInWindow : 0
        let bytes = windowOpen ? connection.messageBytesInWindow : 0
        var refusal: ShowroomError? = nil
        if connection.role == .audience {
            refusal = .roleForbidsPublish("uid \(connection.uid) is audience in channel \(name) and cannot send stream messages; switch to broadcaster first")
        } else if !connection.options.publishData {
            refusal = .trackNotPublished("the media options of channel \(name) do not publish data; set publish_data first")
        } else if let error = connection.grant.refusal(of: .publishData, at: now, for: "send stream messages in channel \(name)") {
            refusal = error
        } else if data.count > limits.maxStreamMessageBytes {
            refusal = .streamMessageTooLarge("a \(data.count)-byte stream message exceeds the limit of \(limits.maxStreamMessageBytes) bytes")
        } else if messages + 1 > limits.maxStreamMessagesPerSecond || bytes + data.count > limits.maxStreamMessageBytesPerSecond {
            refusal = .streamMessageRateLimited("at most \(limits.maxStreamMessagesPerSecond) stream messages and \(limits.maxStreamMessageBytesPerSecond) bytes per second per channel; slow down")
        }
        if let refusal {
            fail(refusal, .sendStreamMessage, requestID: requestID, to: session, channel: name, now: now, &out)
            return out
        }
        if !windowOpen { channel.connections[session]!.messageWindowStart = now }
        channel.connections[session]!.messagesInWindow = messages + 1
        channel.connections[session]!.messageBytesInWindow = bytes + data.count
        let sequence = (connection.streamSequences[streamID] ?? 0) &+ 1
        channel.connections[session]!.streamSequences[streamID] = sequence
        statistics.streamMessages += 1
        let message = EdgeEvent.streamMessage(channel: name, uid: connection.uid, streamID: streamID, sequence: sequence, data: data)
        for other in channel.order where other != session {
            out.append(.send(message, to: other))
        }
        reply(.streamMessageSent(sequence: sequence), .sendStreamMessage, requestID: requestID, to: session, &out)
        return out
    }

    /// Delivers a message from the business server (through a room-coordinator) to the users of
    /// the channel on this edge — all, or those in `uids` — as a stream message from uid 0 on
    /// stream 0; relay links are left out (each edge delivers to its own users).
    ///
    /// - Returns: How many connections it was handed to, and the directives.
    /// - Throws: `STREAM_MESSAGE_TOO_LARGE` past the stream message limit.
    public func sendServerMessage(channel name: String, to uids: Set<UInt32>, data: [UInt8]) throws(ShowroomError)
        -> (delivered: Int, directives: [EdgeDirective]) {
        guard data.count <= settings.limits.maxStreamMessageBytes else {
            throw .streamMessageTooLarge("a \(data.count)-byte message exceeds the limit of \(settings.limits.maxStreamMessageBytes) bytes")
        }
        guard let channel = channels[name] else { return (0, []) }
        let message = EdgeEvent.streamMessage(channel: name, uid: 0, streamID: 0, sequence: 0, data: data)
        var out: [EdgeDirective] = []
        for session in channel.order {
            guard let connection = channel.connections[session], !connection.unreported,
                  uids.isEmpty || uids.contains(connection.uid) else { continue }
            out.append(.send(message, to: session))
        }
        return (out.count, out)
    }

    /// Enables (or with `nil`, disables) volume indication for all the session's channels
    /// (`enableAudioVolumeIndication`): every interval, one report per channel with its loudest
    /// speakers, from the levels publishers send with their audio frames.
    ///
    /// - Parameters:
    ///   - session: The client connection.
    ///   - requestID: The request's id (0: no reply).
    ///   - config: Interval (at least ``EdgeSettings/minVolumeInterval``), smoothing (0–10), VAD;
    ///     `nil` disables.
    ///   - now: The current clock value; the first reports go out one interval later.
    /// - Returns: The reply; `INVALID_ARGUMENT` for an interval under the minimum or smoothing
    ///   outside 0–10.
    public mutating func enableVolumeIndication(
        _ session: SessionID, requestID: UInt64 = 0, config: VolumeIndicationConfig?, now: Duration
    ) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        guard sessions[session] != nil else {
            fail(.noSession("no session is open on this connection"), .enableVolumeIndication, requestID: requestID, to: session, now: now, &out)
            return out
        }
        touch(session, now: now)
        if let config {
            var refusal: ShowroomError? = nil
            if config.interval < settings.minVolumeInterval {
                refusal = .invalidArgument("volume indication interval \(config.interval) is below the minimum of \(settings.minVolumeInterval)")
            } else if !(0...10).contains(config.smoothing) {
                refusal = .invalidArgument("volume indication smoothing \(config.smoothing) is outside 0–10")
            }
            if let refusal {
                fail(refusal, .enableVolumeIndication, requestID: requestID, to: session, now: now, &out)
                return out
            }
        }
        sessions[session]!.volume = config
        sessions[session]!.nextVolumeReport = now + (config?.interval ?? .zero)
        reply(.done, .enableVolumeIndication, requestID: requestID, to: session, &out)
        return out
    }
}
