import ShowroomWire

/// What an edge does with one message a client sent, decided before the plane sees it
/// (``ClientIntake``).
public enum ClientMessageVerdict: Sendable, Equatable {
    /// Nothing is answered: a response, or an oversized one.
    case drop
    /// The message is refused with `error`, answered as `envelope` asks (``ClientIntake/refusal(of:_:to:)``).
    case refuse(WireEnvelope, ShowroomError)
    /// A media frame is refused as the plane refuses its own (at most once a second per code and
    /// channel).
    case refuseFrame(ShowroomError, channel: String, track: TrackKind?)
    /// A media frame, `[envelope][payload]`: its header is checked by ``ClientIntake/frame(_:payloadSize:fromForwardLink:)``.
    case frame(WireEnvelope)
    /// A request or one-way message of one frame: routed by ``ClientIntake/route(_:)``.
    case request(WireEnvelope)
}

/// What a media frame's header leads to (``ClientIntake/frame(_:payloadSize:fromForwardLink:)``).
public enum FrameVerdict: Sendable, Equatable {
    /// Hand the frame to the plane.
    case forward(WireMediaHeader, MediaFrameInfo)
    /// Refuse it as the plane refuses its own (rate-limited).
    case refuse(ShowroomError, channel: String, track: TrackKind?)
}

/// Where a one-frame client message goes (``ClientIntake/route(_:)``).
public enum RequestRoute: Sendable, Equatable {
    /// `START_FORWARD` … `RESUME_FORWARD` with a request id: the forward of the sender's own
    /// connection (``ForwardBook/clientRequest(_:from:in:)``).
    case forward
    /// `RELAY_KEYFRAME_REQUEST` from a relay link (one-way).
    case relayKeyframeRequest
    /// `EDGE_MOVED_OUT`: one-way and harmless from anyone; it only lets a draining edge close sooner.
    case movedOut
    /// A request for the plane (after the drain, the relays and the claims had their say).
    case plane(EdgeRequest)
    /// The request does not decode: refused with this error.
    case refuse(ShowroomError)
}

/// How a message that never reached the plane is refused (``ClientIntake/refusal(of:_:to:)``).
public enum ClientRefusal: Sendable, Equatable {
    /// A failed reply or an error event, as the plane sends its own.
    case directive(EdgeDirective)
    /// A failed response to a message kind the plane has no reply for.
    case response(WireEnvelope)
}

/// The checks a client's message passes on an edge before the plane sees it: its size, its
/// envelope, its shape, its kind, and who may send what. Pure: the shell reads the bytes and
/// carries out the verdict. Checked in the order the answers depend on: a message over
/// ``EdgeLimits/maxMessageBytes`` is answered from its envelope's head without decoding it.
public enum ClientIntake {
    /// What is answered to a client whose routing id is longer than a session id holds (only one
    /// that set a long `ZMQ_ROUTING_ID`): it is told why, once per message.
    public static var longRoutingIDRefusal: WireEnvelope {
        WireEnvelope(responseTo: WireEnvelope(), error: .invalidArgument(
            "client routing ids longer than 7 bytes are not accepted; do not set ZMQ_ROUTING_ID"))
    }

    /// Whether a message of `size` bytes (without its routing id) is over the limit and is
    /// answered by ``oversize(_:maxMessageBytes:head:)`` rather than decoded.
    public static func isOversize(_ size: Int, maxMessageBytes: Int) -> Bool { size > maxMessageBytes }

    /// A message over the limit, from its envelope's `head` (peeked, not decoded): a failed reply
    /// to its request id, or an error event (rate-limited for media frames); nothing for a response.
    public static func oversize(_ size: Int, maxMessageBytes: Int, head: WireEnvelope) -> ClientMessageVerdict {
        let error = ShowroomError.tooLarge(
            "the message is \(size) bytes; this edge reads at most \(maxMessageBytes) bytes per message "
                + "(max_message_bytes in the session's limits); media payloads are at most max_frame_bytes")
        if head.isResponse { return .drop }
        if head.kind == .mediaFrame { return .refuseFrame(error, channel: "", track: nil) }
        return .refuse(head, error)
    }

    /// A message within the limit: its decoded envelope (or why it did not decode) and how many
    /// frames follow the envelope.
    public static func message(_ decoded: Result<WireEnvelope, ShowroomError>, attachments: Int) -> ClientMessageVerdict {
        let envelope: WireEnvelope
        switch decoded {
        case .success(let read): envelope = read
        case .failure(let error): return .refuse(WireEnvelope(), error)
        }
        if envelope.isResponse { return .drop }
        if envelope.protocolVersion > WireEnvelope.currentProtocolVersion {
            return .refuse(envelope, .unsupportedVersion(
                "protocol version \(envelope.protocolVersion) is newer than this edge's \(WireEnvelope.currentProtocolVersion); upgrade the edge"))
        }
        if envelope.kind == .mediaFrame {
            guard attachments == 1 else {
                return .refuseFrame(.malformed("a media frame is two frames, [envelope][payload]; got \(attachments + 1) frames"),
                                    channel: "", track: nil)
            }
            return .frame(envelope)
        }
        guard attachments == 0 else {
            return .refuse(envelope, .malformed(
                "a \(envelope.kind) message is one frame, [envelope], with no attachments; got \(attachments + 1) frames"))
        }
        return .request(envelope)
    }

    /// A media frame's header against its payload's size; `also_channels` only from an
    /// edge-to-edge link (`fromForwardLink`, asked only then). Nothing is allocated beyond the
    /// header's decoding.
    public static func frame(_ envelope: WireEnvelope, payloadSize: Int, fromForwardLink: @autoclosure () -> Bool) -> FrameVerdict {
        let header: WireMediaHeader
        do {
            header = try envelope.decodeBody(WireMediaHeader.self)
        } catch {
            return .refuse(error, channel: "", track: nil)
        }
        let info: MediaFrameInfo
        do {
            info = try EdgeCodec.checkedFrameInfo(header: header, payloadSize: payloadSize)
        } catch {
            return .refuse(error, channel: header.channel, track: EdgeCodec.trackKind(header.track))
        }
        if !header.alsoChannels.isEmpty, !fromForwardLink() {
            return .refuse(.invalidArgument("media header also_channels is for edge-to-edge links only; send one frame per channel"),
                           channel: header.channel, track: EdgeCodec.trackKind(header.track))
        }
        return .forward(header, info)
    }

    /// Where a one-frame message goes, by its kind.
    public static func route(_ envelope: WireEnvelope) -> RequestRoute {
        if EdgeCodec.isForwardRequest(envelope.kind) {
            guard envelope.requestID != 0 else {
                return .refuse(.invalidArgument("forwarding requests need a request id: the answer carries the destinations"))
            }
            return .forward
        }
        if envelope.kind == .relayKeyframeRequest { return .relayKeyframeRequest }
        if envelope.kind == .edgeMovedOut { return .movedOut }
        do {
            return .plane(try EdgeCodec.request(from: envelope))
        } catch {
            return .refuse(error)
        }
    }

    /// How `session` is told that `envelope` was refused with `error`: an error event for a
    /// one-way message (no request id), else a failed reply, or a failed response for a kind the
    /// plane has no reply for.
    public static func refusal(of envelope: WireEnvelope, _ error: ShowroomError, to session: SessionID) -> ClientRefusal {
        guard envelope.requestID != 0 else { return .directive(.send(.error(error, channel: "", track: nil), to: session)) }
        if let kind = EdgeCodec.requestKind(of: envelope.kind) {
            return .directive(.reply(EdgeReply(requestID: envelope.requestID, kind: kind, result: .failure(error)), to: session))
        }
        return .response(WireEnvelope(responseTo: envelope, error: error))
    }
}
