/// What ``ChannelPlane`` asks its shell to do, in order.
///
/// Media frames are not directives: the plane hands them to the shell's send callback during
/// ``ChannelPlane/forward(_:info:from:now:send:)`` and
/// ``ChannelPlane/sendCachedFrames(_:to:now:send:)``, so the hot path builds no arrays.
public enum EdgeDirective: Sendable, Hashable {
    /// Send the response to a request (``EdgeCodec/envelope(reply:)``).
    case reply(EdgeReply, to: SessionID)
    /// Send an event (``EdgeCodec/envelope(event:)``).
    case send(EdgeEvent, to: SessionID)
    /// A new subscriber of this video track starts from the GOP cache: call
    /// ``ChannelPlane/sendCachedFrames(_:to:now:send:)`` now, before forwarding the track's next
    /// frame.
    case sendCachedFrames(TrackID, to: SessionID)
    /// Ask the track's publisher for a keyframe (``EdgeCodec/keyframeRequest(for:)``). Already
    /// rate-limited per track.
    case requestKeyframe(TrackID, from: SessionID)
    /// The session is gone from the plane: forget its routing state. Anything to tell it was sent
    /// by the directives before.
    case closeSession(SessionID)
    /// Tell the room-coordinator that owns the channel what happened in it, in the order of
    /// these directives.
    case report(ChannelActivity)
    /// Log a line.
    case log(EdgeLogEntry)
}
