import CZeroMQ
import Dispatch
import Foundation
import HeapModule
import Synchronization

/// Errors of the event loop itself.
public enum EventLoopError: Error, Sendable, Equatable {
    /// The loop was shut down before the work could run; the work did not run.
    case shutDown
}

/// A timer scheduled on an ``EventLoop``, for cancelling it.
public struct TimerID: Hashable, Sendable {
    /// The timer's number on its loop; a ``TimerID`` made from it again names the same timer.
    public let value: UInt64

    /// The timer numbered `value` (one a loop returned).
    public init(value: UInt64) { self.value = value }
}

/// One dedicated thread that owns a set of ZeroMQ sockets and waits for them to become ready,
/// plus timers, plus work posted from other threads and from async code.
///
/// The loop sleeps on each socket's notification descriptor (`ZMQ_FD`, with epoll on Linux) and
/// reads `ZMQ_EVENTS` only for the sockets that signalled or were used since their last check, so
/// a wake-up costs in proportion to the busy sockets, not the registered ones: hundreds of
/// sockets (engines sharing a loop) cost what a few do. `zmq_poll` would ask every socket on
/// every wake-up.
///
/// Everything that touches the loop's sockets runs on its thread: socket handlers, timers and
/// posted work. Other threads talk to the loop only through ``execute(_:)``, ``submit(_:)`` and
/// ``submitAndWait(_:)``. ``shutdown()`` never hangs: sockets are closed with `LINGER 0`, and
/// posted work that has not run yet fails with ``EventLoopError/shutDown``.
public final class EventLoop: @unchecked Sendable {
    // @unchecked: `mailbox` is behind a mutex; `confined` is touched only on the loop thread
    // (checked); the wake pipe and the stop semaphore are thread-safe by nature.

    /// The loop's name, used for its thread.
    public let name: String
    /// The context the loop's sockets are created in.
    public let context: Context

    private struct Job {
        let run: @Sendable () -> Void
        let fail: @Sendable () -> Void
    }

    private struct Mailbox {
        var jobs: [Job] = []
        var wakePending = false
        var state = State.idle
    }

    private enum State { case idle, running, stopping, stopped }

    private let mailbox = Mutex(Mailbox())
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let stopped = DispatchSemaphore(value: 0)
    private let confinedState: Confined
    private var thread: Thread?
    private let threadLock = Mutex<pthread_t?>(nil)

    /// Creates a loop; call ``start()`` to run it.
    public convenience init(name: String, context: Context) throws(ZeroMQError) {
        try self.init(name: name, context: context, waitMethod: .best)
    }

    /// Creates a loop that sleeps with `waitMethod` (tests run both).
    init(name: String, context: Context, waitMethod: DescriptorWaitMethod) throws(ZeroMQError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw ZeroMQError(errno: errno, operation: "pipe for event loop wake-ups",
                              message: String(cString: strerror(errno)))
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        self.name = name
        self.context = context
        self.wakeReader = fds[0]
        self.wakeWriter = fds[1]
        let waiter: DescriptorWaiter
        do {
            waiter = try DescriptorWaiter(method: waitMethod)
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        let added = waiter.add(fds[0], token: Self.wakeToken)
        guard added == 0 else {
            close(fds[0])
            close(fds[1])
            throw ZeroMQError(errno: added, operation: "watching the event loop's wake pipe",
                              message: String(cString: strerror(added)))
        }
        self.confinedState = Confined(waiter: waiter)
    }

    deinit {
        close(wakeReader)
        close(wakeWriter)
    }

    /// Creates a loop on a new context-sharing thread and starts it.
    public static func start(name: String, context: Context) throws(ZeroMQError) -> EventLoop {
        let loop = try EventLoop(name: name, context: context)
        loop.start()
        return loop
    }

    /// Starts the loop's thread. Work posted before this waits until it starts.
    public func start() {
        let shouldStart = mailbox.withLock { box -> Bool in
            guard box.state == .idle else { return false }
            box.state = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            threadLock.withLock { $0 = pthread_self() }
            run()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// True when called on the loop's thread.
    public var inEventLoop: Bool {
        guard let owner = threadLock.withLock({ $0 }) else { return false }
        return pthread_equal(owner, pthread_self()) != 0
    }

    // MARK: Posting work from any thread

    /// Runs `work` on the loop's thread, soon. Dropped silently if the loop has shut down;
    /// use ``submit(_:)`` to learn whether work ran.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        enqueue(Job(run: work, fail: {}))
    }

    /// Runs `work` on the loop's thread and returns its result to the awaiting task.
    /// Throws ``EventLoopError/shutDown`` if the loop stops before the work runs.
    public func submit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            enqueue(Job(
                run: { continuation.resume(with: Result { try work() }) },
                fail: { continuation.resume(throwing: EventLoopError.shutDown) }))
        }
    }

    /// Runs `work` on the loop's thread and blocks the calling thread until it returns.
    /// For plain threads only: never call it from the loop itself or from async code.
    public func submitAndWait<T: Sendable>(_ work: @escaping @Sendable () throws -> T) throws -> T {
        precondition(!inEventLoop, "submitAndWait from the loop's own thread would deadlock")
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        enqueue(Job(
            run: {
                let r = Result { try work() }
                result.withLock { $0 = r }
                done.signal()
            },
            fail: {
                result.withLock { $0 = .failure(EventLoopError.shutDown) }
                done.signal()
            }))
        done.wait()
        return try result.withLock { $0! }.get()
    }

    private func enqueue(_ job: Job) {
        let needsWake = mailbox.withLock { box -> Bool? in
            guard box.state == .idle || box.state == .running else { return nil }
            box.jobs.append(job)
            defer { box.wakePending = true }
            return !box.wakePending
        }
        switch needsWake {
        case nil: job.fail()
        case true?: wake()
        case false?: break
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)  // EAGAIN: the pipe is full, so the loop wakes anyway
    }

    // MARK: Shutdown

    /// Stops the loop: closes its sockets, fails posted work that has not run, and (from any
    /// other thread) waits for the thread to end. From the loop's own thread it returns at once
    /// and the loop stops after the current handler.
    public func shutdown() {
        let wasIdle = mailbox.withLock { box -> Bool in
            switch box.state {
            case .idle:
                box.state = .stopped
                return true
            case .running:
                box.state = .stopping
                return false
            case .stopping, .stopped:
                return false
            }
        }
        if wasIdle {
            failPendingJobs()
            stopped.signal()
        } else {
            wake()
        }
        if !inEventLoop { waitUntilStopped() }
    }

    /// Blocks until the loop has stopped (never from the loop's own thread).
    public func waitUntilStopped() {
        precondition(!inEventLoop, "waiting for the loop to stop from the loop itself")
        stopped.wait()
        stopped.signal()  // let every other waiter through too
    }

    private func failPendingJobs() {
        let jobs = mailbox.withLock { box -> [Job] in
            defer { box.jobs = [] }
            return box.jobs
        }
        for job in jobs { job.fail() }
    }

    // MARK: Loop-thread API

    /// Called on the loop when a registered socket is ready; `events` says how.
    public typealias SocketHandler = (Socket, PollEvents) -> Void

    /// Watches `socket` for `events` and calls `handler` on the loop when it is ready (again after
    /// each call while it stays ready, so a handler may take one message at a time). The loop then
    /// owns the socket and closes it at shutdown. Registering a registered socket replaces its
    /// events and handler. Loop thread only.
    public func register(_ socket: Socket, for events: PollEvents = .readable, handler: @escaping SocketHandler) {
        let state = confined()
        if let existing = state.registrations[ObjectIdentifier(socket)] {
            existing.events = events
            existing.handler = handler
            state.enqueue(existing)
            return
        }
        guard !socket.isClosed, let fd = try? socket.get(.fileDescriptor) else { return }
        state.nextToken += 1
        let registration = Registration(socket: socket, events: events, handler: handler, fd: fd, token: state.nextToken)
        guard state.waiter.add(fd, token: registration.token) == 0 else { return }
        state.registrations[ObjectIdentifier(socket)] = registration
        state.byToken[registration.token] = registration
        state.descriptorOwners[fd] = registration
        socket.onUseAfterEventCheck = { [weak state, weak registration] in
            if let state, let registration { state.enqueue(registration) }
        }
        // It may be ready already: its notification may have been consumed before it was watched.
        state.enqueue(registration)
    }

    /// Stops watching `socket`; the caller owns it again. Loop thread only.
    public func unregister(_ socket: Socket) {
        let state = confined()
        guard let registration = state.registrations[ObjectIdentifier(socket)] else { return }
        state.remove(registration)
    }

    /// Changes the events watched for a registered socket (e.g. add `.writable` while a queue
    /// waits to drain). Loop thread only.
    public func updateEvents(of socket: Socket, to events: PollEvents) {
        let state = confined()
        guard let registration = state.registrations[ObjectIdentifier(socket)] else { return }
        registration.events = events
        state.enqueue(registration)
    }

    /// Runs `body` once on the loop after `delay`. Timers due at the same instant run in the order
    /// they were scheduled. Loop thread only.
    @discardableResult
    public func scheduleTimer(after delay: Duration, _ body: @escaping () -> Void) -> TimerID {
        let state = confined()
        state.nextTimer += 1
        let id = TimerID(value: state.nextTimer)
        state.timers.insert(TimerEntry(deadline: .now + max(delay, .zero), id: id))
        state.timerBodies[id] = body
        return id
    }

    /// Runs `body` on the loop every `interval` until cancelled (with the returned id, which stays
    /// valid across repetitions). Loop thread only.
    @discardableResult
    public func scheduleRepeating(every interval: Duration, _ body: @escaping () -> Void) -> TimerID {
        let state = confined()
        state.nextTimer += 1
        let id = TimerID(value: state.nextTimer)
        state.timers.insert(TimerEntry(deadline: .now + interval, id: id))
        state.timerBodies[id] = body
        state.repeatIntervals[id] = interval
        return id
    }

    /// Cancels a timer; a no-op if it already ran. Loop thread only.
    public func cancelTimer(_ id: TimerID) {
        let state = confined()
        state.timerBodies[id] = nil
        state.repeatIntervals[id] = nil
    }

    /// Runs `body` on the loop thread when the loop stops, before its sockets are closed (to send
    /// a last message, for example). Loop thread only.
    public func onShutdown(_ body: @escaping () -> Void) {
        confined().shutdownHooks.append(body)
    }

    // MARK: The loop

    private static let wakeToken = UInt64.max

    private final class Registration {
        let socket: Socket
        var events: PollEvents
        var handler: SocketHandler
        /// The socket's notification descriptor (`ZMQ_FD`).
        let fd: Int32
        let token: UInt64
        /// Waiting in the loop's ready queue.
        var queued = false
        var isActive = true

        init(socket: Socket, events: PollEvents, handler: @escaping SocketHandler, fd: Int32, token: UInt64) {
            self.socket = socket
            self.events = events
            self.handler = handler
            self.fd = fd
            self.token = token
        }
    }

    private struct TimerEntry: Comparable {
        let deadline: ContinuousClock.Instant
        let id: TimerID
        static func < (a: TimerEntry, b: TimerEntry) -> Bool {
            (a.deadline, a.id.value) < (b.deadline, b.id.value)
        }
    }

    /// State only the loop thread touches.
    private final class Confined {
        let waiter: DescriptorWaiter
        var registrations: [ObjectIdentifier: Registration] = [:]
        var byToken: [UInt64: Registration] = [:]
        /// Which registration watches a descriptor: a closed socket's descriptor number may be
        /// reused by a newer socket before the loop notices the close.
        var descriptorOwners: [Int32: Registration] = [:]
        /// Sockets whose `ZMQ_EVENTS` must be read in the next round, in order.
        var ready: [Registration] = []
        var readySpare: [Registration] = []
        var nextToken: UInt64 = 0
        var timers = Heap<TimerEntry>()
        var timerBodies: [TimerID: () -> Void] = [:]
        var repeatIntervals: [TimerID: Duration] = [:]
        var nextTimer: UInt64 = 0
        var shutdownHooks: [() -> Void] = []

        init(waiter: DescriptorWaiter) {
            self.waiter = waiter
        }

        func enqueue(_ registration: Registration) {
            guard !registration.queued, registration.isActive else { return }
            registration.queued = true
            ready.append(registration)
        }

        func remove(_ registration: Registration) {
            guard registration.isActive else { return }
            registration.isActive = false
            registrations[ObjectIdentifier(registration.socket)] = nil
            byToken[registration.token] = nil
            registration.socket.onUseAfterEventCheck = nil
            if descriptorOwners[registration.fd] === registration {
                descriptorOwners[registration.fd] = nil
                waiter.remove(registration.fd)
            }
        }
    }

    private func confined(file: StaticString = #fileID, line: UInt = #line) -> Confined {
        precondition(inEventLoop, "EventLoop '\(name)' API used off its thread", file: file, line: line)
        return confinedState
    }

    private func run() {
        let state = confinedState
        var fired: [UInt64] = []
        while !isStopping() {
            // Sockets still queued are looked at without sleeping.
            let timeout = state.ready.isEmpty ? pollTimeout(state) : 0
            fired.removeAll(keepingCapacity: true)
            let error = state.waiter.wait(timeoutMs: timeout, into: &fired)
            precondition(error == 0 || error == EINTR,
                         "EventLoop '\(name)': waiting for descriptors failed: \(String(cString: strerror(error)))")
            for token in fired {
                if token == Self.wakeToken {
                    drainMailbox()
                } else if let registration = state.byToken[token] {
                    state.enqueue(registration)
                }
            }
            if isStopping() { break }
            guard dispatchReadiness(state) else { break }  // the context is ending
            if isStopping() { break }
            runDueTimers(state)
        }
        finish(state)
    }

    private func isStopping() -> Bool {
        mailbox.withLock { $0.state != .running }
    }

    private func pollTimeout(_ state: Confined) -> Int {
        while let top = state.timers.min, state.timerBodies[top.id] == nil {
            _ = state.timers.removeMin()  // cancelled
        }
        guard let next = state.timers.min else { return -1 }
        let remaining = ContinuousClock.now.duration(to: next.deadline)
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        // Round up so the loop does not wake just before the deadline and spin.
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// Reads `ZMQ_EVENTS` of every queued socket and calls the handlers of the ready ones, in queue
    /// order. A socket used since its check (by a handler, a timer or posted work) queues itself
    /// again (``Socket/onUseAfterEventCheck``): the use may have consumed its notification, so only
    /// `ZMQ_EVENTS` can tell whether it is ready; one that stays ready gets another turn after
    /// the others. Returns false when the sockets' context is
    /// being terminated: the loop must stop and close its sockets so the termination can finish.
    private func dispatchReadiness(_ state: Confined) -> Bool {
        swap(&state.ready, &state.readySpare)
        defer { state.readySpare.removeAll(keepingCapacity: true) }
        for registration in state.readySpare {
            registration.queued = false
            guard registration.isActive else { continue }
            let socket = registration.socket
            guard !socket.isClosed, let events = Self.events(of: socket) else {
                if !socket.isClosed, zmq_errno() == ETERM { return false }
                // Closed behind the loop's back: forget it.
                state.remove(registration)
                continue
            }
            socket.usedSinceEventCheck = false
            let ready = PollEvents(rawValue: events & registration.events.rawValue)
            guard !ready.isEmpty else { continue }
            registration.handler(socket, ready)
            if isStopping() { return true }
        }
        return true
    }

    /// `ZMQ_EVENTS`, read without marking the socket used; nil if libzmq refuses.
    private static func events(of socket: Socket) -> Int16? {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(socket.handle, ZMQ_EVENTS, &value, &size) == 0 else { return nil }
        return Int16(truncatingIfNeeded: value)
    }

    private func drainMailbox() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeReader, &buffer, buffer.count) > 0 {}
        let jobs = mailbox.withLock { box -> [Job] in
            box.wakePending = false
            defer { box.jobs = [] }
            return box.jobs
        }
        for job in jobs { job.run() }
    }

    private func runDueTimers(_ state: Confined) {
        let now = ContinuousClock.now
        while let top = state.timers.min, top.deadline <= now {
            _ = state.timers.removeMin()
            guard let body = state.timerBodies[top.id] else { continue }
            if let interval = state.repeatIntervals[top.id] {
                // Next deadline from the planned one, so a late tick does not drift the schedule;
                // but never in the past, so a stalled loop does not fire a burst.
                var next = top.deadline + interval
                if next <= now { next = now + interval }
                state.timers.insert(TimerEntry(deadline: next, id: top.id))
            } else {
                state.timerBodies[top.id] = nil
            }
            body()
            if isStopping() { return }
        }
    }

    private func finish(_ state: Confined) {
        for hook in state.shutdownHooks { hook() }
        state.shutdownHooks = []
        for registration in Array(state.registrations.values) {
            state.remove(registration)
            registration.socket.close()
        }
        state.ready = []
        state.timers = Heap()
        state.timerBodies = [:]
        state.repeatIntervals = [:]
        // From here enqueue refuses new work; work posted before the stop fails, so its callers
        // learn it did not run rather than waiting forever.
        mailbox.withLock { $0.state = .stopped }
        failPendingJobs()
        stopped.signal()
    }
}
