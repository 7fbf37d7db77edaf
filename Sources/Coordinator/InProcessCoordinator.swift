import Logging
import NodeRuntime
import RoomStore
import ShowroomWire
import SwiftProtobuf

/// A coordinator on any ``NodeServices`` — an in-process network or a simulation — rather than a
/// process: the same shell and request handling a `showroom-coordinator` runs, with its database
/// written inline (so what a killed coordinator had stored does not depend on a thread's timing),
/// no webhooks, and what it publishes handed to `published` instead of an events socket.
public final class InProcessCoordinator {
    /// What the coordinator published: topic (`room/<id>`, `channel/<name>`, `call/<id>`), kind and
    /// the encoded body.
    public typealias Published = (_ topic: String, _ kind: WireMessageKind, _ body: [UInt8]) -> Void

    private final class Sink: EventSink {
        let published: Published
        init(_ published: @escaping Published) { self.published = published }
        func publish(topic: String, kind: WireMessageKind, body: some SwiftProtobuf.Message) {
            published(topic, kind, (try? body.serializedBytes()) ?? [])
        }
    }

    private let shell: CoordinatorShell

    /// Loads `store` and serves the coordinator's requests on `node` (call ``install()`` to start).
    ///
    /// - Parameters:
    ///   - node: Where the coordinator runs; it reads the time from the node's clock.
    ///   - configuration: What every server is configured with (node id, app credentials …).
    ///   - settings: What a coordinator is (room expiry, relays …; its database and webhooks are
    ///     not used here).
    ///   - store: Its database; pass the same one to a restarted coordinator.
    ///   - random: Where room ids and tokens' salts come from.
    ///   - faults: Rules to break on purpose (empty: none).
    ///   - logger: Its log.
    ///   - published: Receives what it publishes.
    public init(node: any NodeServices, configuration: NodeConfiguration, settings: CoordinatorSettings = CoordinatorSettings(),
                store: RoomStore,
                random: any RandomNumberGenerator, faults: DeliberateFaults = [], logger: Logger,
                published: @escaping Published) throws(ShowroomError) {
        shell = try CoordinatorShell(node: node, configuration: configuration, settings: settings,
                                     storage: StoreWriter(store: store, logger: logger, inline: true),
                                     publisher: Sink(published), webhooks: nil, logger: logger,
                                     random: random, faults: faults)
    }

    /// Registers the request handlers and timers on the node.
    public func install() { shell.install() }

    /// Room `roomID` as this coordinator holds it (owned or replicated), if it does.
    public func room(_ roomID: String) -> RoomRoom? { shell.machine.records.registry.room(roomID) }

    /// The chat messages of room `roomID` as this coordinator holds them.
    public func messages(in roomID: String) -> [RoomChatMessage] { shell.machine.records.registry.messages(in: roomID) }
}
