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
}
