/// One received media frame as a sink sees it: the header's facts and the encoded payload.
///
/// `payload` points into the engine's receive buffer and is valid only during the sink call;
/// copy what you keep. Nothing is allocated to hand it over.
public struct RemoteMediaFrame {
    /// The channel connection it arrived on.
    public let connection: ChannelConnection
    /// The publisher.
    public let uid: UInt32
    /// Per-track counter, +1 per frame at the publisher; a gap means frames were skipped.
    public let sequence: UInt32
    /// Capture time on the publisher's ``MediaClock``, in microseconds.
    public let captureTimeMicroseconds: UInt64
    /// When the publisher handed it to its socket, after encoding, on the publisher's
    /// ``MediaClock`` (0 from publishers that do not set it).
    public let sendTimeMicroseconds: UInt64
    /// When the engine received it, on this process's ``MediaClock``.
    public let receiveTimeMicroseconds: UInt64
    /// Video: decodes without earlier frames.
    public let isKeyframe: Bool
    /// Video: encoded picture size (set at least on keyframes).
    public let width: Int
    /// Video: encoded picture height.
    public let height: Int
    /// Audio: the publisher's level before encoding, 0–100.
    public let audioLevel: Int
    /// The encoded frame (VP8 or Opus).
    public let payload: UnsafeRawBufferPointer

    /// Receive minus capture time: the publish-to-receive latency when publisher and receiver
    /// share a process (a test, a benchmark); meaningless across processes.
    public var latencyMicroseconds: Int64 {
        Int64(bitPattern: receiveTimeMicroseconds &- captureTimeMicroseconds)
    }

    /// Receive minus send time: the network and edge part of the latency, without capture and
    /// encoding (same-process publishers only; `nil` when the publisher set no send time).
    public var transitMicroseconds: Int64? {
        sendTimeMicroseconds == 0 ? nil : Int64(bitPattern: receiveTimeMicroseconds &- sendTimeMicroseconds)
    }
}

/// What a video sink made of a frame.
public enum VideoSinkOutcome: Sendable, Hashable {
    /// Taken (counted, forwarded, queued) but not decoded.
    case received
    /// Decoded to a picture of this size; the engine reports the first one per remote user as
    /// ``EngineEvent/firstRemoteVideoFrameDecoded(_:uid:width:height:elapsedSinceJoin:)``.
    case decoded(width: Int, height: Int)
    /// Could not be decoded (corrupt, or a delta frame without its keyframe).
    case failed
}

/// Receives one remote user's video (``ShowroomEngine/setupRemoteVideo(uid:connection:sink:)``).
///
/// Called on the engine's loop thread for every frame, in arrival order; keep it fast, since
/// every engine on the loop waits for it.
public protocol RemoteVideoSink: AnyObject, Sendable {
    /// Takes one frame.
    ///
    /// - Parameter frame: The frame; its payload is valid only during the call.
    /// - Returns: Whether it was decoded.
    func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome
}

/// Receives one remote user's audio (``ShowroomEngine/setupRemoteAudio(uid:connection:sink:)``).
/// Called on the engine's loop thread every 20 ms per remote speaker.
public protocol RemoteAudioSink: AnyObject, Sendable {
    /// Takes one 20 ms Opus frame.
    ///
    /// - Parameter frame: The frame; its payload is valid only during the call.
    func consume(_ frame: RemoteMediaFrame)
}
