/// A value confined to an ``EventLoop``'s thread that may be carried across threads but only used
/// on that loop: every access checks.
///
/// Lets a `Sendable` owner (a node, a service) hold loop-confined state such as sockets and their
/// handlers without making that state `Sendable`.
public struct LoopBound<Value>: @unchecked Sendable {
    // @unchecked: `stored` is only read on `loop`'s thread (checked in `value`).
    private let stored: Value
    /// The loop the value belongs to.
    public let loop: EventLoop

    /// Binds `value` to `loop`; call on the loop's thread.
    public init(_ value: Value, loop: EventLoop) {
        precondition(loop.inEventLoop, "LoopBound created off its loop")
        self.stored = value
        self.loop = loop
    }

    /// The value; on the loop's thread only.
    public var value: Value {
        precondition(loop.inEventLoop, "LoopBound value used off its loop '\(loop.name)'")
        return stored
    }
}
