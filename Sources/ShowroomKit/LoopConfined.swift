internal import ZeroMQ

/// State of a `Sendable` service that lives on its loop's thread, made on first use there. Like
/// `LoopBound`, but for owners created off the loop (a synchronous initialiser cannot wait for
/// the loop without blocking its caller).
final class LoopConfined<Value>: @unchecked Sendable {
    // @unchecked: `stored` is only touched on `loop`'s thread (checked in `value`).
    let loop: EventLoop
    private let make: @Sendable () -> Value
    private var stored: Value?

    init(loop: EventLoop, _ make: @escaping @Sendable () -> Value) {
        self.loop = loop
        self.make = make
    }

    /// The value, made now if this is the first use; on the loop's thread only.
    var value: Value {
        precondition(loop.inEventLoop, "loop-confined state used off its loop '\(loop.name)'")
        if let stored { return stored }
        let made = make()
        stored = made
        return made
    }
}

/// Lets a task carry a loop-confined object back to its loop without keeping it alive.
final class WeakLoopReference<Object: AnyObject>: @unchecked Sendable {
    // @unchecked: `object` is only dereferenced on the object's loop (the caller's duty: the
    // reference is made there and read in work posted there).
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// Work made on a loop, carried through a task and run back on that loop.
struct UncheckedLoopWork<Argument, Value>: @unchecked Sendable {
    // @unchecked: made and run on the same loop (the caller's duty), never run elsewhere.
    let work: (Argument, Value) -> Void
    init(_ work: @escaping (Argument, Value) -> Void) { self.work = work }
}
