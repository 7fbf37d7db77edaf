/// An engine's media counters since it started.
public struct EngineStatistics: Sendable, Hashable {
    /// Video frames sent (one per publishing connection per encoded frame).
    public var videoFramesSent = 0
    /// Keyframes among them.
    public var keyframesSent = 0
    /// Audio frames sent.
    public var audioFramesSent = 0
    /// Frames not sent because the edge's queue was full.
    public var framesDroppedOnSend = 0
    /// Keyframe requests received from edges.
    public var keyframeRequests = 0
    /// Video frames received, with or without a sink.
    public var videoFramesReceived = 0
    /// Audio frames received, with or without a sink.
    public var audioFramesReceived = 0
    /// Media frames received for no known connection, or malformed.
    public var framesDiscarded = 0
    /// Requests that got no answer in time.
    public var requestsTimedOut = 0
    /// Connections rejoined on another edge after theirs failed.
    public var rejoins = 0
    /// Connections moved off a draining edge before it closed (make before break).
    public var moves = 0
    /// Edge sessions opened (a warm one reused for the next room is not opened again).
    public var sessionsOpened = 0
}
