import FlyingSocks
import Logging
import Synchronization

/// Sends FlyingFox's log lines to swift-log. FlyingFox's own default prints to standard output,
/// which the node reserves for its `ready …` line.
///
/// FlyingFox logs every connection and request at info: that is debug for an admin port
/// scraped every few seconds. Its "error" lines are mostly clients misbehaving (notice). Its
/// "critical" line when `stop()` ends the server is expected, so it is demoted once stopping.
struct FlyingFoxLogBridge: FlyingSocks.Logging {
    let logger: Logger
    let stopping: StoppingFlag

    func logDebug(_ debug: @autoclosure () -> String) {
        logger.trace("\(debug())")
    }

    func logInfo(_ info: @autoclosure () -> String) {
        logger.debug("\(info())")
    }

    func logWarning(_ warning: @autoclosure () -> String) {
        logger.warning("\(warning())")
    }

    func logError(_ error: @autoclosure () -> String) {
        logger.notice("\(error())")
    }

    func logCritical(_ critical: @autoclosure () -> String) {
        if stopping.isSet {
            logger.debug("\(critical())")
        } else {
            logger.error("\(critical())")
        }
    }
}

/// A flag set once, read from any thread.
final class StoppingFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .acquiring) }

    func set() { value.store(true, ordering: .releasing) }
}
