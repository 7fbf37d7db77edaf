import Calls
import Logging
import NodeRuntime

/// A call-signal node on any ``NodeServices`` — an in-process network or a simulation — rather
/// than a process: the same shell and request handling a `showroom-callsignal` runs, reading the
/// node's clock and drawing session ids, call ids and token salts from the random source given.
public final class InProcessCallSignal {
    private let shell: CallSignalShell

    /// A node on `node` (call ``install()`` to start serving).
    ///
    /// - Parameters:
    ///   - node: Where it runs.
    ///   - configuration: What every server is configured with (node id, app credentials …).
    ///   - random: Where its ids and token salts come from.
    ///   - logger: Its log.
    public init(node: any NodeServices, configuration: NodeConfiguration, random: any RandomNumberGenerator,
                logger: Logger) {
        shell = CallSignalShell(node: node, configuration: configuration, logger: logger, random: random)
    }

    /// Registers the request handlers and timers on the node.
    public func install() { shell.install() }

    /// The calls this node holds (active, and ended ones kept a while), by id: what a
    /// simulation's checks read after a run.
    public var calls: [String: Call] { shell.book.calls }

    /// The call each user this node owns is in (or is reserved for while dialling).
    public var callOfUsers: [UInt32: UserRecord.InCall] { shell.machine.callOf }

    /// The record of `uid` this node holds, as its owner or its replica.
    public func record(of uid: UInt32) -> UserRecord? { shell.records[UserRecord.key(of: uid)] }
}
