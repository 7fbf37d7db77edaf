import Foundation
import Logging
import Membership
import NodeRuntime
import Rooms
import RoomStore
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf
import Webhooks
import ZeroMQ

/// The coordinator's state and request handling, confined to the node's loop: the pure state
/// machines (registry, placements, event numbering, bans) with the shell's duties around them —
/// routing each request to the coordinator that owns its room or channel, persisting and
/// replicating every write, publishing notices and events.
///
/// Ownership: a room (by id) or a channel (by name) belongs to the first of the alive coordinators
/// in rendezvous order; the second is its successor and holds a replica of every write. When the
/// set of alive coordinators changes, every coordinator hands each new owner and successor what it
/// holds for them (``StateBatch``; higher versions win), which is also how a restarted coordinator
/// catches up after reloading its database.
final class CoordinatorCore {
    let node: Node
    let configuration: NodeConfiguration
    let store: RoomStore
    let publisher: EventPublisher
    let webhooks: WebhookDispatcher?
    let logger: Logger
    var registry: RoomRegistry
    var placements: PlacementTable
    var sequencer = ChannelEventSequencer()
    var bans = BanList()
    /// The latest channel list each edge reported, by edge id.
    var edgeChannels: [String: [RoomChannelStatus]] = [:]
    /// The edges reporting each channel, by channel name (from ``edgeChannels``).
    var channelHosts: [String: Set<String>] = [:]
    /// The alive coordinators' ids, this one included, sorted; refreshed on every membership change
    /// (ownership is computed from it per request, so it is not derived again each time).
    private(set) var coordinators: [String] = []
    var random = SystemRandomNumberGenerator()

    /// How long a forwarded request or a replication may take.
    static let peerTimeout = Duration.seconds(2)
    /// How long the reachability probe of an edge a client reported unreachable may take.
    static let probeTimeout = Duration.milliseconds(400)

    init(node: Node, configuration: NodeConfiguration, store: RoomStore, publisher: EventPublisher,
         webhooks: WebhookDispatcher?, logger: Logger) throws(ShowroomError) {
        self.node = node
        self.configuration = configuration
        self.store = store
        self.publisher = publisher
        self.webhooks = webhooks
        self.logger = logger
        var settings = RoomSettings()
        settings.roomExpiryMs = Int64(configuration.roomExpirySeconds) * 1000
        settings.ownerGraceMs = Int64(configuration.ownerGraceSeconds) * 1000
        registry = RoomRegistry(settings: settings)
        placements = PlacementTable(expiryMs: Int64(configuration.placementExpirySeconds) * 1000)
        let stored = try store.load()
        _ = registry.merge(rooms: stored.rooms, messages: stored.messages)
        // Loaded placements stand for one expiry from now, time for their edges to report.
        _ = placements.merge(stored.placements, nowMs: Self.nowMs)
        _ = sequencer.merge(stored.sequences)
        _ = bans.merge(stored.bans)
        logger.info("coordinator state loaded", metadata: [
            "rooms": "\(stored.rooms.count)", "messages": "\(stored.messages.count)", "bans": "\(stored.bans.count)",
        ])
    }

    /// Registers the request handlers and timers on the node.
    func install() {
        for kind: WireMessageKind in [.roomCreate, .roomGet, .roomJoin, .roomLeave, .roomClose, .roomChatSend,
                                      .roomChatHistory] {
            node.handleDeferred(kind) { [self] request, _, respond in routeRoomRequest(request, respond) }
        }
        node.handleDeferred(.roomList) { [self] request, _, respond in listRooms(request, respond) }
        node.handleDeferred(.channelPlace) { [self] request, _, respond in placeChannel(request, respond) }
        node.handleDeferred(.channelClaim) { [self] request, _, respond in claimChannel(request, respond) }
        node.handleDeferred(.kick) { [self] request, _, respond in kick(request, respond) }
        node.handleDeferred(.edgeChannelReport) { [self] request, _, respond in edgeReport(request, respond) }
        node.handle(.channelList) { [self] _, _ in listChannels() }
        node.handle(.banList) { [self] _, _ in
            var answer = RoomBanListResponse()
            answer.bans = bans.active(nowMs: Self.nowMs)
            return answer
        }
        node.handle(.coordinatorState) { [self] request, _ in
            try receiveState(try request.decodeBody(RoomStateBatch.self))
            return RoomStateBatchResponse()
        }
        node.onMembershipChange { [self] in membershipChanged() }
        node.loop.scheduleRepeating(every: .seconds(1)) { [self] in tick() }
        membershipChanged()
    }

    static var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
    var selfID: String { configuration.nodeID }

    // MARK: - Membership

    /// Alive members of `role`, with their metadata, sorted by id (this node included when the role
    /// is its own).
    func alive(_ role: NodeRole) -> [Member] {
        node.membersOnLoop.filter { $0.state == .alive && $0.metadata.role == role.rawValue }
            .sorted { $0.id.rawValue < $1.id.rawValue }
    }

    /// The other alive coordinators.
    var otherCoordinators: [String] { coordinators.filter { $0 != selfID } }

    /// Owner first, then successor, for `key`.
    func holders(of key: String) -> [String] {
        Array(RendezvousHashing.ranked(key: key, among: coordinators).prefix(2))
    }

    func clusterEndpoint(of id: String) -> String? {
        node.membersOnLoop.first { $0.id.rawValue == id }?.metadata.clusterEndpoint
    }

    private func membershipChanged() {
        var ids = Set(alive(.coordinator).map(\.id.rawValue))
        ids.insert(selfID)
        let current = ids.sorted()
        let aliveEdges = Set(alive(.edge).map(\.id.rawValue))
        // Channels on edges that are gone: forgotten, so the next placement request places them again.
        let evicted = placements.evict(keepingOnly: aliveEdges)
        if !evicted.isEmpty {
            persist { try store.delete(placementsOf: evicted.map(\.channel)) }
            logger.info("edges gone: channels to place again", metadata: ["channels": "\(evicted.count)"])
        }
        for edge in edgeChannels.keys where !aliveEdges.contains(edge) { setChannels(of: edge, nil) }
        guard current != coordinators else { return }
        let joined = Set(current).subtracting(coordinators)
        coordinators = current
        handOver(toNewcomers: joined)
    }

    // MARK: - Timers

    private func tick() {
        let now = Self.nowMs
        // Every holder ticks its copy alike (same rules, same clock within a skew); only the owner
        // publishes the resulting notices.
        let changes = registry.tick(nowMs: now)
        apply(changes, replicate: true, publish: { holders(of: $0.room.roomID).first == selfID })
        let expired = bans.purge(nowMs: now)
        if !expired.isEmpty { persist { try store.delete(bans: expired) } }
        expirePlacements(nowMs: now)
    }

    // MARK: - Writes: persist, publish, replicate

    /// Persists `changes`, publishes their notices (where `publish` says so) and sends them to each
    /// room's other holder.
    func apply(_ changes: [RoomChange], replicate: Bool, publish: (RoomChange) -> Bool = { _ in true },
               then done: (() -> Void)? = nil) {
        guard !changes.isEmpty else {
            done?()
            return
        }
        persist { try store.persist(changes) }
        for change in changes where publish(change) {
            guard let kind = change.notice else { continue }
            var notice = RoomRoomNotice()
            notice.roomID = change.room.roomID
            notice.kind = kind
            notice.room = change.room
            if let message = change.message { notice.message = message }
            notice.atMs = Self.nowMs
            publisher.publish(topic: "room/\(change.room.roomID)", kind: .roomNotice, body: notice)
        }
        guard replicate else {
            done?()
            return
        }
        var batches: [String: RoomStateBatch] = [:]
        for change in changes where !change.purged {
            for holder in holders(of: change.room.roomID) where holder != selfID {
                batches[holder, default: RoomStateBatch()].rooms.append(change.room)
                if let message = change.message { batches[holder, default: RoomStateBatch()].messages.append(message) }
            }
        }
        send(batches, then: done)
    }

    /// Sends `batch` to every other alive coordinator (cluster-wide tables: placements, bans).
    func sendToOtherCoordinators(_ batch: RoomStateBatch, then done: (() -> Void)? = nil) {
        send(Dictionary(uniqueKeysWithValues: otherCoordinators.map { ($0, batch) }), then: done)
    }

    /// Sends each batch to its coordinator; `done` runs once all answered or failed.
    func send(_ batches: [String: RoomStateBatch], then done: (() -> Void)? = nil) {
        var remaining = batches.count
        guard remaining > 0 else {
            done?()
            return
        }
        for (holder, batch) in batches {
            var batch = batch
            batch.from = selfID
            guard let endpoint = clusterEndpoint(of: holder) else {
                remaining -= 1
                if remaining == 0 { done?() }
                continue
            }
            node.send(.coordinatorState, body: batch, to: endpoint, timeout: Self.peerTimeout) { [logger] result in
                if case .failure(let error) = result {
                    logger.warning("replication to \(holder) failed", metadata: ["error": "\(error)"])
                } else if case .success(let answer) = result, let failure = answer.failure {
                    logger.warning("replication to \(holder) refused", metadata: ["error": "\(failure)"])
                }
                remaining -= 1
                if remaining == 0 { done?() }
            }
        }
    }

    /// Runs `read` (decoding and checking a request); a failure is answered at once — its
    /// ``ShowroomError``, anything else as internal — and `nil` returned.
    func answering<T>(_ respond: Node.Responder, _ read: () throws -> T) -> T? {
        do {
            return try read()
        } catch let error as ShowroomError {
            respond(.failure(error))
        } catch {
            respond(.failure(.internal("\(error)")))
        }
        return nil
    }

    /// Runs a database write; a failure is logged (the state in memory stays authoritative and the
    /// replica holds it too).
    func persist(_ write: () throws -> Void) {
        do {
            try write()
        } catch {
            logger.error("database write failed", metadata: ["error": "\(error)"])
        }
    }

    /// A batch from another coordinator: replication or catch-up.
    private func receiveState(_ batch: RoomStateBatch) throws(ShowroomError) {
        let changes = registry.merge(rooms: batch.rooms, messages: batch.messages)
        apply(changes, replicate: false, publish: { _ in false })
        let placed = placements.merge(batch.placements, nowMs: Self.nowMs)
        let (removed, kept) = (placed.filter(\.edgeID.isEmpty), placed.filter { !$0.edgeID.isEmpty })
        if !kept.isEmpty { persist { try store.save(placements: kept) } }
        if !removed.isEmpty { persist { try store.delete(placementsOf: removed.map(\.channel)) } }
        let numbered = sequencer.merge(batch.sequences)
        if !numbered.isEmpty { persist { try store.save(sequences: numbered) } }
        let banned = bans.merge(batch.bans)
        if !banned.isEmpty { persist { try store.save(bans: banned) } }
    }

    /// Hands every coordinator what it now owns or succeeds (rooms with their chat), and the
    /// cluster-wide tables (placements, sequences, bans) to newcomers.
    private func handOver(toNewcomers newcomers: Set<String>) {
        var batches: [String: RoomStateBatch] = [:]
        for room in registry.rooms.values {
            for holder in holders(of: room.roomID) where holder != selfID {
                batches[holder, default: RoomStateBatch()].rooms.append(room)
                batches[holder, default: RoomStateBatch()].messages.append(contentsOf: registry.messages(in: room.roomID))
            }
        }
        for newcomer in newcomers where newcomer != selfID {
            batches[newcomer, default: RoomStateBatch()].placements = Array(placements.placements.values)
            batches[newcomer, default: RoomStateBatch()].sequences = sequencer.sequences
            batches[newcomer, default: RoomStateBatch()].bans = bans.active(nowMs: Self.nowMs)
        }
        // Large holdings go in slices so no message nears the size limit.
        var sliced: [(String, RoomStateBatch)] = []
        for (holder, batch) in batches {
            if batch.rooms.count <= 200 && batch.messages.count <= 2000 {
                sliced.append((holder, batch))
                continue
            }
            var head = batch
            head.rooms = []
            head.messages = []
            sliced.append((holder, head))
            for start in stride(from: 0, to: batch.rooms.count, by: 200) {
                var slice = RoomStateBatch()
                slice.rooms = Array(batch.rooms[start..<min(start + 200, batch.rooms.count)])
                let ids = Set(slice.rooms.map(\.roomID))
                slice.messages = batch.messages.filter { ids.contains($0.roomID) }
                sliced.append((holder, slice))
            }
        }
        for (holder, batch) in sliced { send([holder: batch]) }
        if !sliced.isEmpty {
            logger.info("coordinators changed: handing over state", metadata: [
                "coordinators": "\(coordinators)", "batches": "\(sliced.count)",
            ])
        }
    }
}
