import ShowroomWire

// The relay link's one message of its own (proto/showroom/edge/relay.proto).

extension EdgeCodec {
    /// The `RELAY_KEYFRAME_REQUEST` a relay sends its origin for a track its viewers wait on.
    public static func relayKeyframeRequest(for track: TrackID) throws(ShowroomError) -> WireEnvelope {
        var body = EdgeRelayKeyframeRequest()
        body.channel = track.channel
        body.uid = track.uid
        body.track = wire(track.kind)
        return try WireEnvelope(request: .relayKeyframeRequest, id: 0, body: body)
    }

    /// The track of a `RELAY_KEYFRAME_REQUEST` (origin side).
    ///
    /// - Throws: ``ShowroomError`` for another kind, an undecodable body, an invalid channel name
    ///   or a track kind neither audio nor video.
    public static func relayKeyframeRequest(from envelope: WireEnvelope) throws(ShowroomError) -> TrackID {
        guard envelope.kind == .relayKeyframeRequest else { throw .unknownKind("expected RELAY_KEYFRAME_REQUEST, got \(envelope.kind)") }
        let body = try envelope.decodeBody(EdgeRelayKeyframeRequest.self)
        guard Names.isValidChannel(body.channel) else { throw .invalidArgument("the relay keyframe request names no valid channel") }
        return TrackID(channel: body.channel, uid: body.uid, kind: try requiredTrackKind(body.track))
    }
}
