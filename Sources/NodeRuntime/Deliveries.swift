import Logging
import Routing
import ShowroomWire
import SwiftProtobuf

/// Messages for the owner of a key in a role (the coordinator owning a room, a channel), sent until
/// one answers: while no member of the role is alive or the owner does not answer, a message goes
/// again every second (``retryDue()``, called by the shell's timer) for ``attempts`` tries, to the
/// owner of the moment. A refusal is final. Every message sent this way must be idempotent.
///
/// Loop-confined, like the node it sends through.
public final class Deliveries {
    private let node: any NodeServices
    private let role: NodeRole
    private let logger: Logger
    private let attempts: Int
    private let timeout: Duration
    private var waiting: [Delivery] = []

    private struct Delivery {
        var kind: WireMessageKind
        var key: String
        var what: String
        var attempt: Int
        var dueMs: Int64
        var body: () -> any SwiftProtobuf.Message
        var answered: ((WireEnvelope) -> Void)?
    }

    /// - Parameters:
    ///   - node: Where messages go from (its loop runs every call).
    ///   - role: The role whose owner of the key gets each message.
    ///   - attempts: Tries before a message is given up (one a second).
    ///   - timeout: How long one try waits for its answer.
    public init(node: any NodeServices, role: NodeRole, logger: Logger, attempts: Int = 30, timeout: Duration = .seconds(2)) {
        self.node = node
        self.role = role
        self.logger = logger
        self.attempts = attempts
        self.timeout = timeout
    }

    /// Messages waiting for another try.
    public var count: Int { waiting.count }

    /// Sends a message to the owner of `key` until one answers.
    ///
    /// - Parameters:
    ///   - what: What it is, for the log when it is refused or given up.
    ///   - body: Made again for every try (a retry may carry a fresh signature).
    ///   - answered: Gets the answer that ended the tries (a success or a final refusal).
    public func deliver(_ kind: WireMessageKind, key: String, what: String,
                        body: @escaping () -> any SwiftProtobuf.Message, answered: ((WireEnvelope) -> Void)? = nil) {
        send(Delivery(kind: kind, key: key, what: what, attempt: 1, dueMs: 0, body: body, answered: answered))
    }

    /// Sends again the messages whose retry is due.
    public func retryDue() {
        let now = node.clock.nowMs()
        let due = waiting.filter { $0.dueMs <= now }
        waiting.removeAll { $0.dueMs <= now }
        for delivery in due { send(delivery) }
    }

    private func send(_ delivery: Delivery) {
        let retry = { [self] (error: ShowroomError) in
            guard delivery.attempt < attempts else {
                return logger.warning("given up: \(delivery.what)", metadata: ["error": "\(error)", "attempts": "\(delivery.attempt)"])
            }
            var again = delivery
            again.attempt += 1
            again.dueMs = node.clock.nowMs() + 1_000
            waiting.append(again)
        }
        guard let owner = node.ring(role).owner(of: delivery.key), let endpoint = node.clusterEndpoint(of: owner) else {
            return retry(ShowroomError(.unavailable, "no \(role) is alive"))
        }
        node.send(delivery.kind, body: delivery.body(), to: endpoint, timeout: timeout) { [logger] result in
            switch result {
            case .failure(let error):
                retry(error)
            case .success(let answer):
                if let refusal = answer.failure {
                    if [.unavailable, .deadlineExceeded, .noCoordinator].contains(refusal.code) { return retry(refusal) }
                    logger.info("refused: \(delivery.what)", metadata: ["refusal": "\(refusal)"])
                }
                delivery.answered?(answer)
            }
        }
    }
}
