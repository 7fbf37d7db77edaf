internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

/// The engine shell's world in an app: the engine loop's clock and timers, a ZeroMQ session
/// (``EdgeSession``) per edge link, and the engine's ``ChannelPlacement`` asked off the loop.
final class LoopEngineHost: EngineHost {
    let loop: EventLoop
    let context: Context
    /// Where joins, rejoins and moves are placed (the engine's placement).
    let placement: any ChannelPlacement

    init(loop: EventLoop, context: Context, placement: any ChannelPlacement) {
        self.loop = loop
        self.context = context
        self.placement = placement
    }

    /// Messages handled per readiness callback before the loop serves its other sockets (many
    /// engines may share the loop); the rest wait for the next poll, which returns at once.
    static var receiveBatch: Int { 256 }

    var now: ContinuousClock.Instant { .now }

    func microseconds(at instant: ContinuousClock.Instant) -> UInt64 { MediaClock.microseconds(at: instant) }

    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> HostTimer {
        HostTimer(value: loop.scheduleTimer(after: delay, action).value)
    }

    func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void) -> HostTimer {
        HostTimer(value: loop.scheduleRepeating(every: interval, action).value)
    }

    func cancel(_ timer: HostTimer) {
        loop.cancelTimer(TimerID(value: timer.value))
    }

    func connect(to edge: EdgeAddress, receive: @escaping (_ message: any EngineMessage, _ firstOfBatch: Bool) -> Void,
                 broke: @escaping () -> Void) throws(ShowroomError) -> any EngineLink {
        let session = try EdgeSession(edge: edge, context: context, loop: loop)
        let message = ReceivedMultipart(parts: session.receiveBuffer)
        loop.register(session.socket) { [weak session] _, _ in
            guard let session else { return }
            var handled = 0
            while handled < Self.receiveBatch, !session.isClosed {
                guard (try? session.socket.receive(into: session.receiveBuffer)) == true else { return }
                handled += 1
                receive(message, handled == 1)
            }
        }
        loop.register(session.monitor.socket) { [weak session] _, _ in
            guard let session, !session.isClosed, session.connectionBroke() else { return }
            broke()
        }
        return session
    }

    /// The placement is async: it runs in a task, and `done` back on the loop.
    func place(_ channel: String, credentials: PlacementCredentials, avoiding: EdgeAddress?,
               _ done: @escaping (Result<EdgeAddress, ShowroomError>) -> Void) {
        let placement = self.placement
        let loop = self.loop
        let done = UncheckedLoopWork<Result<EdgeAddress, ShowroomError>, Void> { placed, _ in done(placed) }
        Task {
            let placed: Result<EdgeAddress, ShowroomError>
            do throws(ShowroomError) {
                placed = .success(try await placement.edge(for: channel, avoiding: avoiding, joiningAs: credentials))
            } catch {
                placed = .failure(error)
            }
            loop.execute { done.work(placed, ()) }
        }
    }
}
