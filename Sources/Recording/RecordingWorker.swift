import Foundation  // Thread, NSCondition: the worker is a plain thread that may block on the disk
import Logging
import ShowroomWire
import Synchronization

/// Recordings written on a thread of their own, so that a slow or full disk never holds up the
/// thread that hands them frames (an edge's loop): frames wait in a queue bounded in bytes, and a
/// frame that does not fit fails its recording ("the disk is too slow") instead of waiting. The
/// show goes on either way; only the recording stops, with its reason.
///
/// What the recordings tell (``PublisherRecording/Event``) is given to `report` on the worker's
/// thread, with the recording's key.
public final class RecordingWorker: Sendable {
    /// One recording: a publisher in a channel.
    public struct Key: Sendable, Hashable, CustomStringConvertible {
        public var channel: String
        public var uid: UInt32

        public init(channel: String, uid: UInt32) {
            self.channel = channel
            self.uid = uid
        }

        public var description: String { "uid \(uid) in \(channel)" }
    }

    /// The default bound of the queue: 64 MiB, about 17 minutes of a 500 kbit/s stream.
    public static let defaultMaxQueuedBytes = 64 << 20

    private enum Command {
        case start(Key, PublisherRecording.Settings, startedAtMs: Int64)
        case video(Key, [UInt8], timestampMs: Int64, keyframe: Bool, width: Int, height: Int)
        case audio(Key, [UInt8], timestampMs: Int64)
        case stop(Key)
        case fail(Key, reason: String)
        case work(@Sendable () -> Void)
        case shutDown

        var bytes: Int {
            switch self {
            case .video(_, let payload, _, _, _, _), .audio(_, let payload, _): payload.count
            default: 0
            }
        }
    }

    private struct Queue {
        var commands: [Command] = []
        var head = 0
        var bytes = 0
        /// Recordings started and not stopped: only their frames are taken.
        var running: Set<Key> = []
        /// Recordings whose frames overflowed the queue: what they are sent is dropped until they
        /// are started again.
        var overflowed: Set<Key> = []
        var isShutDown = false

        mutating func take() -> Command? {
            guard head < commands.count else { return nil }
            let command = commands[head]
            head += 1
            bytes -= command.bytes
            if head > 1024, head * 2 > commands.count {
                commands.removeFirst(head)
                head = 0
            }
            return command
        }
    }

    /// What the worker's thread and the threads handing it frames share.
    private final class Shared: Sendable {
        let queue = Mutex(Queue())
        /// Wakes the worker: signalled under it after each command queued.
        let wake = NSCondition()
        /// Signalled once the worker's thread has ended.
        let stopped = NSCondition()
        let finished = Mutex(false)
    }

    /// The most frame bytes waiting at once.
    public let maxQueuedBytes: Int
    private let shared = Shared()
    private var wake: NSCondition { shared.wake }

    /// Starts the worker's thread.
    ///
    /// - Parameters:
    ///   - maxQueuedBytes: The most frame bytes waiting at once (at least 1).
    ///   - clock: The recorder's clock, Unix time in ms (names files, stamps their start and end).
    ///   - logger: Where the recordings' lines go.
    ///   - report: Gets what each recording tells, on the worker's thread.
    public init(maxQueuedBytes: Int = RecordingWorker.defaultMaxQueuedBytes,
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
                logger: Logger = Logger(label: "showroom.recording"),
                report: @escaping @Sendable (Key, PublisherRecording.Event) -> Void) {
        self.maxQueuedBytes = max(1, maxQueuedBytes)
        let thread = Thread { [shared] in
            // Named for the OS too (Linux), so that its CPU can be told apart (/proc/PID/task/TID/comm).
            try? "recording".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            let wake = shared.wake
            var recordings: [Key: PublisherRecording] = [:]
            func deliver(_ key: Key, _ events: [PublisherRecording.Event]) {
                for event in events { report(key, event) }
            }
            loop: while true {
                wake.lock()
                var command = shared.queue.withLock { $0.take() }
                while command == nil {
                    wake.wait()
                    command = shared.queue.withLock { $0.take() }
                }
                wake.unlock()
                switch command! {
                case .start(let key, let settings, let startedAtMs):
                    if let running = recordings.removeValue(forKey: key) { deliver(key, running.finish(nowMs: clock())) }
                    do throws(ShowroomError) {
                        recordings[key] = try PublisherRecording(channel: key.channel, uid: key.uid, settings: settings,
                                                                 startedAtMs: startedAtMs, logger: logger)
                    } catch {
                        report(key, .failed(reason: error.message))
                    }
                case .video(let key, let payload, let timestampMs, let keyframe, let width, let height):
                    guard let recording = recordings[key] else { continue }
                    deliver(key, payload.withUnsafeBytes {
                        recording.video($0, timestampMs: timestampMs, keyframe: keyframe, width: width, height: height, nowMs: clock())
                    })
                case .audio(let key, let payload, let timestampMs):
                    guard let recording = recordings[key] else { continue }
                    deliver(key, payload.withUnsafeBytes { recording.audio($0, timestampMs: timestampMs, nowMs: clock()) })
                case .stop(let key):
                    if let recording = recordings.removeValue(forKey: key) { deliver(key, recording.finish(nowMs: clock())) }
                case .fail(let key, let reason):
                    guard let recording = recordings.removeValue(forKey: key) else { continue }
                    // What was written is kept whole; the recording ends with the reason.
                    var events = recording.finish(nowMs: clock()).map { event -> PublisherRecording.Event in
                        guard case .finished(var file) = event else { return event }
                        file.failure = reason
                        return .finished(file)
                    }
                    events.append(.failed(reason: reason))
                    deliver(key, events)
                case .work(let work):
                    work()
                case .shutDown:
                    for key in recordings.keys.sorted(by: { ($0.channel, $0.uid) < ($1.channel, $1.uid) }) {
                        deliver(key, recordings[key]!.finish(nowMs: clock()))
                    }
                    recordings = [:]
                    break loop
                }
            }
            shared.stopped.lock()
            shared.finished.withLock { $0 = true }
            shared.stopped.broadcast()
            shared.stopped.unlock()
        }
        thread.name = "recording"
        thread.start()
    }

    /// Starts recording `key` (a recording of it already running is finished first).
    public func start(_ key: Key, settings: PublisherRecording.Settings, startedAtMs: Int64) {
        enqueue(.start(key, settings, startedAtMs: startedAtMs)) { queue in
            queue.running.insert(key)
            queue.overflowed.remove(key)
        }
    }

    /// Hands the worker one video frame of `key`'s publisher; a copy waits in the queue.
    ///
    /// - Returns: False when it was dropped: the recording is not running (never started, stopped,
    ///   or failed for a full queue), or the queue is full (the recording then fails: the disk is
    ///   too slow).
    @discardableResult
    public func video(_ key: Key, _ payload: UnsafeRawBufferPointer, timestampMs: Int64, keyframe: Bool,
                      width: Int, height: Int) -> Bool {
        offer(key, bytes: payload.count) {
            .video(key, Array(payload), timestampMs: timestampMs, keyframe: keyframe, width: width, height: height)
        }
    }

    /// Hands the worker one audio packet of `key`'s publisher; as ``video(_:_:timestampMs:keyframe:width:height:)``.
    @discardableResult
    public func audio(_ key: Key, _ payload: UnsafeRawBufferPointer, timestampMs: Int64) -> Bool {
        offer(key, bytes: payload.count) { .audio(key, Array(payload), timestampMs: timestampMs) }
    }

    /// Stops recording `key`: its open file is finished and reported.
    public func stop(_ key: Key) {
        enqueue(.stop(key)) { queue in
            queue.running.remove(key)
            queue.overflowed.remove(key)
        }
    }

    /// Runs `work` on the worker's thread, after everything handed over before it.
    package func perform(_ work: @escaping @Sendable () -> Void) {
        enqueue(.work(work)) { _ in }
    }

    /// Finishes every recording and stops the thread; waits until it has.
    public func shutdown() {
        enqueue(.shutDown) { $0.isShutDown = true }
        shared.stopped.lock()
        while !shared.finished.withLock({ $0 }) { shared.stopped.wait() }
        shared.stopped.unlock()
    }

    /// Frame bytes waiting now.
    public var queuedBytes: Int { shared.queue.withLock { $0.bytes } }

    private func offer(_ key: Key, bytes: Int, _ make: () -> Command) -> Bool {
        wake.lock()
        defer {
            wake.signal()
            wake.unlock()
        }
        let limit = maxQueuedBytes
        return shared.queue.withLock { queue in
            guard !queue.isShutDown, queue.running.contains(key), !queue.overflowed.contains(key) else { return false }
            guard queue.bytes <= limit - bytes else {
                queue.overflowed.insert(key)
                queue.commands.append(.fail(key, reason: "the disk is too slow: \(queue.bytes) bytes of frames were waiting "
                    + "to be written, over the recorder's limit of \(limit)"))
                return false
            }
            let command = make()
            queue.bytes += command.bytes
            queue.commands.append(command)
            return true
        }
    }

    private func enqueue(_ command: Command, _ change: (inout Queue) -> Void) {
        wake.lock()
        shared.queue.withLock { queue in
            guard !queue.isShutDown else { return }
            change(&queue)
            queue.commands.append(command)
        }
        wake.signal()
        wake.unlock()
    }
}
