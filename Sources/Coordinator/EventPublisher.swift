import Foundation
import Logging
import NodeRuntime
import ShowroomWire
import SwiftProtobuf
import Synchronization
import ZeroMQ

/// Where the coordinator publishes room notices and channel events.
protocol EventSink: AnyObject {
    /// Publishes `body` as a `kind` envelope under `topic`.
    func publish(topic: String, kind: WireMessageKind, body: some SwiftProtobuf.Message)
}

/// The coordinator's events endpoint: a PUB socket on a loop of its own, publishing
/// `[topic][Envelope]` messages (room notices under `room/<id>`, channel events under
/// `channel/<name>`). A subscriber that cannot keep up loses messages at its high-water mark;
/// it never slows the coordinator.
final class EventPublisher: EventSink, Sendable {
    /// Where subscribers connect.
    let endpoint: String
    private let loop: EventLoop
    private let socket: LoopBound<Socket>
    private let logger: Logger
    /// Browsers' subscriptions (the node's WebSocket face), once the node is up.
    private let browsers = Mutex<Node?>(nil)

    init(bind: String, advertiseHost: String?, logger: Logger) throws {
        self.logger = logger
        let context = try Context(ioThreads: 1)
        let loop = try EventLoop.start(name: "coordinator-events", context: context)
        self.loop = loop
        do {
            let (socket, bound) = try loop.submitAndWait { () throws -> (LoopBound<Socket>, String) in
                let socket = try Socket(.pub, context: context)
                try socket.setHighWaterMarks(send: 10_000, receive: 1)
                let bound = try socket.bind(bind)
                return (LoopBound(socket, loop: loop), bound)
            }
            self.socket = socket
            endpoint = NodeConfiguration.advertised(bound, host: advertiseHost)
        } catch {
            loop.shutdown()
            throw error
        }
    }

    /// Publishes `body` as a `kind` envelope under `topic`. Any thread.
    func publish(topic: String, kind: WireMessageKind, body: some SwiftProtobuf.Message) {
        let frame: [UInt8]
        do {
            frame = try WireEnvelope(request: kind, id: 0, body: body).serializedBytes()
        } catch {
            logger.error("cannot encode a \(kind) notice", metadata: ["error": "\(error)"])
            return
        }
        browsers.withLock { $0 }?.publishToBrowsers(topic: topic, envelope: frame)
        let topicBytes = Array(topic.utf8)
        loop.execute { [socket, logger] in
            do {
                _ = try socket.value.send(frames: [topicBytes, frame])
            } catch {
                logger.warning("cannot publish", metadata: ["topic": "\(topic)", "error": "\(error)"])
            }
        }
    }

    /// Publishes to `node`'s browsers too.
    func alsoPublish(through node: Node) { browsers.withLock { $0 = node } }

    /// Closes the socket and ends the loop.
    func shutdown() {
        loop.execute { [socket] in socket.value.close() }
        loop.shutdown()
    }
}
