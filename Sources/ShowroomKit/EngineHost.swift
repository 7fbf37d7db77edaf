internal import EdgeProtocol
internal import ShowroomWire

/// What the engine's shell (``EngineShell``) needs of the world it runs in: a clock, timers,
/// links to edges that carry the client protocol's messages, and the cluster's placement. An app's
/// engine runs on ``LoopEngineHost`` (its loop thread, ZeroMQ sessions, the engine's placement); a
/// simulation gives simulated ones, so that the same shell and state run against edges on a
/// simulated network and clock.
///
/// Everything a host calls back (a link's messages, a timer, a placement's answer) runs on the
/// shell's thread, one at a time.
package protocol EngineHost: AnyObject {
    /// The host's time now.
    var now: ContinuousClock.Instant { get }
    /// The media clock (stamped on frames and heartbeats) at `instant`, in microseconds.
    func microseconds(at instant: ContinuousClock.Instant) -> UInt64
    /// Runs `action` once after `delay`.
    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> HostTimer
    /// Runs `action` every `interval` until cancelled.
    func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void) -> HostTimer
    /// Cancels a timer; one that ran or was cancelled already is ignored.
    func cancel(_ timer: HostTimer)
    /// Opens a link to `edge`: `receive` gets each message the edge sends, and whether it is the
    /// first of a batch read at once (hearing the edge is noted once per batch); `broke` runs when
    /// the link breaks (the edge's process died, its connection closed).
    ///
    /// - Throws: `UNAVAILABLE` when no link can be opened.
    func connect(to edge: EdgeAddress, receive: @escaping (_ message: any EngineMessage, _ firstOfBatch: Bool) -> Void,
                 broke: @escaping () -> Void) throws(ShowroomError) -> any EngineLink
    /// Asks the cluster where `channel` goes (`avoiding` an edge that just failed); `done` gets
    /// the edge or why not, later.
    func place(_ channel: String, credentials: PlacementCredentials, avoiding: EdgeAddress?,
               _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void)
}

extension EngineHost {
    /// The media clock now, in microseconds.
    package var microseconds: UInt64 { microseconds(at: now) }
}

/// A timer an ``EngineHost`` scheduled, for cancelling it.
package struct HostTimer: Hashable, Sendable {
    package let value: UInt64

    package init(value: UInt64) { self.value = value }
}

/// One link of the engine to an edge, as its ``EngineHost`` opened it.
package protocol EngineLink: AnyObject {
    /// Sends one message of a single frame (a serialized envelope).
    ///
    /// - Returns: False if the edge's queue is full (nothing was sent).
    /// - Throws: `UNAVAILABLE` when the link cannot send any more.
    func send(_ envelope: [UInt8]) throws(ShowroomError) -> Bool
    /// Sends a media frame: `[header][payload]`. A full queue drops it (live media).
    ///
    /// - Returns: False if it was dropped.
    func sendMedia(_ header: [UInt8], _ payload: [UInt8]) -> Bool
    /// Closes the link; nothing is received on it any more.
    func close()
}

/// One message received from an edge: its frames, read in place.
package protocol EngineMessage {
    /// The number of frames.
    var count: Int { get }
    /// Runs `body` on frame `index`'s bytes, valid only during the call.
    func withBytes<R, E: Error>(of index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
}

/// A message held as byte arrays (a simulated link's).
package struct FramesMessage: EngineMessage {
    package let frames: [[UInt8]]

    package init(_ frames: [[UInt8]]) { self.frames = frames }

    package var count: Int { frames.count }

    package func withBytes<R, E: Error>(of index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        // Array's withUnsafeBytes rethrows untyped errors: the typed one is carried out in a result.
        try frames[index].withUnsafeBytes { bytes in Result { () throws(E) -> R in try body(bytes) } }.get()
    }
}
