import Foundation  // Thread: the loop's stop is awaited on a plain thread
internal import ShowroomWire
import Synchronization
internal import ZeroMQ

/// The thread an engine's sockets, timers, encoders and decoders live on: one ZeroMQ event loop.
///
/// Each engine makes its own (``ShowroomEngine/loop``); an app hands it on to the services that
/// work beside the engine (``RoomService/init(seeds:loop:timeout:)``). Within this package many
/// engines can share one (a benchmark puts hundreds of engines on a couple of loops). Sinks and
/// sources run on this thread, so a slow sink slows every engine on the loop.
public final class EngineLoop: Sendable {
    /// The ZeroMQ event loop.
    let eventLoop: EventLoop
    /// The ZeroMQ context of the loop's sockets.
    let context: Context

    /// Starts a loop thread.
    ///
    /// - Parameter name: The thread's name, for debuggers and logs.
    /// - Throws: `INTERNAL` if the loop cannot start.
    package init(name: String = "showroom-engine") throws(ShowroomError) {
        do {
            let context = try Context(ioThreads: 1)
            self.context = context
            eventLoop = try EventLoop.start(name: name, context: context)
        } catch {
            throw .internal("cannot start the engine loop: \(error)")
        }
    }

    /// Stops the loop (closing every socket still on it) and waits for its thread to end, without
    /// blocking the caller's thread.
    package func shutdown() async {
        let loop = eventLoop
        loop.execute { loop.shutdown() }  // from the loop itself: returns at once, stops after
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // waitUntilStopped blocks: give it a plain thread, never the cooperative pool.
            let thread = Thread {
                loop.waitUntilStopped()
                continuation.resume()
            }
            thread.start()
        }
    }

    /// Runs `start` on the loop; it starts an operation that calls its completion (on the loop)
    /// once, now or later. Returns that completion's result to the awaiting task; if the loop has
    /// stopped, `UNAVAILABLE`.
    func perform<T: Sendable>(
        _ start: @escaping @Sendable (_ complete: @escaping (Result<T, ShowroomError>) -> Void) -> Void
    ) async throws(ShowroomError) -> T {
        let box = CompletionBox<T>()
        do {
            try await eventLoop.submit { start { box.complete($0) } }
        } catch {
            box.complete(.failure(.unavailable("the engine has shut down")))
        }
        return try await box.value().get()
    }
}

/// A result handed from the loop to one awaiting task, whichever comes first.
final class CompletionBox<T: Sendable>: Sendable {
    private enum State {
        case empty
        case done(Result<T, ShowroomError>)
        case waiting(CheckedContinuation<Result<T, ShowroomError>, Never>)
        case delivered
    }

    private let state = Mutex(State.empty)

    /// Records the result (the first call wins) and wakes the waiter.
    func complete(_ result: Result<T, ShowroomError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<T, ShowroomError>, Never>? in
            switch state {
            case .empty:
                state = .done(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .done, .delivered:
                return nil
            }
        }
        waiter?.resume(returning: result)
    }

    /// Waits for the result.
    func value() async -> Result<T, ShowroomError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<T, ShowroomError>? in
                switch state {
                case .done(let result):
                    state = .delivered
                    return result
                case .empty:
                    state = .waiting(continuation)
                    return nil
                case .waiting, .delivered:
                    preconditionFailure("CompletionBox awaited twice")
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
