import Foundation
import Logging

/// A server process started by a test or a benchmark stops when the process that started it is
/// gone: with `SHOWROOM_EXIT_WITH_PARENT=<pid>` in its environment it watches its parent and sends
/// itself SIGTERM (the usual graceful stop) once its parent is another, so a runner that crashed
/// leaves no cluster behind. Processes started by an operator do not set it.
public enum ParentWatch {
    /// The environment variable naming the parent's pid.
    public static let variable = "SHOWROOM_EXIT_WITH_PARENT"

    /// Starts watching when the variable is set.
    static func start(logger: Logger) {
        guard let text = ProcessInfo.processInfo.environment[variable], let parent = Int32(text), parent > 1 else { return }
        Thread {
            // getppid changes when the parent dies (the orphan is adopted); a four-times-a-second
            // look costs nothing and needs no cooperation from the parent.
            while getppid() == parent { Thread.sleep(forTimeInterval: 0.25) }
            logger.warning("the process that started this one (pid \(parent)) is gone: stopping")
            kill(getpid(), SIGTERM)
        }.start()
    }
}
