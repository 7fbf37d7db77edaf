import Logging
import Membership
import NodeRuntime
import ReplicatedOwnership
import Rooms
import RoomStore
import Routing
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf
import Webhooks

/// The coordinator's shell, confined to the node's loop: the pure state machines (registry,
/// placements, event numbering, bans) and the replicated-ownership bookkeeping, with the duties
/// around them — routing each request to the coordinator that owns its room or channel, persisting
/// (on the store's own thread), replicating, publishing notices and events.
///
/// Ownership (``Replication``): a room (by id) or a channel's event numbers (by name) belong to
/// the first alive coordinator in rendezvous order; the second is its successor and holds a
/// replica of every write before the write is answered. Placements and bans are held by every
/// coordinator. When the alive coordinators change, every coordinator hands each key's new
/// holders what it holds (``RoomStateBatch``; higher versions win), which is also how a restarted
/// coordinator catches up after reloading its database.
final class CoordinatorShell {
    let node: any NodeServices
    let configuration: NodeConfiguration
    let storage: StoreWriter
    let publisher: any EventSink
    let webhooks: WebhookDispatcher?
    let logger: Logger
    /// What this coordinator decides and keeps: its records and their replication, the keys it
    /// takes over, the channel events not yet published, what the edges were told (``CoordinatorNode``).
    var machine: CoordinatorNode
    /// Who holds rooms and channel event numbers: owner and successor.
    var ownership: Replication { machine.ownership }
    /// Where room ids and request ids come from: the system's generator, or a seeded one in a
    /// simulation.
    var random: AnyRandomNumberGenerator
    /// Rules broken on purpose (a simulation's mutant); empty in every process.
    let faults: DeliberateFaults
    /// Messages for other rooms' owners (PK steps), sent until the owner has them.
    lazy var deliveries = Deliveries(node: node, role: .coordinator, logger: logger, timeout: Self.peerTimeout)
    /// The sizes of the state kept, as gauges.
    let metrics = CoordinatorMetrics()
    /// Callbacks of writes waiting for their replicas (which run, and when, is decided there).
    private var waitingWrites = WaitingWrites<() -> Void>()
    /// What runs when a request held for a catch-up (``TakeOver/hold(_:deadlineMs:)``) is served
    /// or refused, by its id.
    private var heldForCatchUp: [UInt64: (serve: () -> Void, fail: () -> Void)] = [:]
    /// How long a request waits for a catch-up: less than a forwarding coordinator waits.
    static let catchUpWaitMs: Int64 = 1_500
    /// Rooms per catch-up page (with their chat), so no answer nears the message size limit.
    static let catchUpPageRooms = 100
    /// What the cluster's configuration records without being asked.
    let recordingRules: RecordingRules
    /// User-list reads out to the edges, shared by the callers asking the same at once, and the
    /// answers no edge report has overtaken yet.
    var userReads: SharedReads<RoomChannelUsersRequest, Node.Responder, RoomChannelUsersResponse>

    /// Whether this coordinator sees most of the cluster, from one look at the members
    /// (``CoordinatorNode/seesMostOfTheCluster(in:)``).
    var seesMostOfTheCluster: Bool { machine.seesMostOfTheCluster(in: members) }

    /// The members as the membership sees them now, with whether this coordinator's connection
    /// to each broke.
    var members: [CoordinatorNode.MemberLook] {
        node.membersOnLoop.map { member in
            let state: CoordinatorNode.MemberLook.State = switch member.state {
            case .alive: .alive
            case .suspect: .suspect
            case .dead: .dead
            case .left: .left
            }
            return CoordinatorNode.MemberLook(nodeID: member.nodeID, nodeRole: member.nodeRole, state: state,
                                              linkBroken: node.connectionBroken(to: member.metadata.clusterEndpoint))
        }
    }

    /// The keys this coordinator may write now, from one look at the members
    /// (``CoordinatorNode/writableKeys(seesMostOfTheCluster:)``).
    var writableKeys: (String) -> Bool { machine.writableKeys(seesMostOfTheCluster: seesMostOfTheCluster) }

    /// How long a forwarded request or a replication may take.
    static let peerTimeout = Duration.seconds(2)
    /// How long the reachability probe of an edge a client reported unreachable may take.
    static let probeTimeout = Duration.milliseconds(400)

    init(node: any NodeServices, configuration: NodeConfiguration, settings: CoordinatorSettings, storage: StoreWriter, publisher: any EventSink,
         webhooks: WebhookDispatcher?, logger: Logger,
         random: any RandomNumberGenerator = SystemRandomNumberGenerator(),
         faults: DeliberateFaults = []) throws(ShowroomError) {
        self.node = node
        self.faults = faults
        self.random = AnyRandomNumberGenerator(random)
        self.configuration = configuration
        self.storage = storage
        self.publisher = publisher
        self.webhooks = webhooks
        self.logger = logger
        recordingRules = RecordingRules(calls: settings.recordCalls, owners: Set(settings.recordOwners))
        userReads = SharedReads(keepMs: Int64(settings.userListKeepMs))
        var rooms = RoomSettings()
        rooms.roomExpiryMs = Int64(settings.roomExpirySeconds) * 1000
        rooms.ownerGraceMs = Int64(settings.ownerGraceSeconds) * 1000
        let records = CoordinatorRecords(
            registry: RoomRegistry(settings: rooms),
            directory: ChannelDirectory(placementExpiryMs: Int64(settings.placementExpirySeconds) * 1000,
                                        relayThreshold: settings.relayThreshold))
        machine = CoordinatorNode(records: records, selfID: configuration.nodeID, startedAtMs: node.clock.nowMs())
        machine.writesWithoutMajority = faults.contains(.writeWithoutMajority)
        let stored: RoomStateBatch
        do {
            stored = CoordinatorRecords.merged(try storage.store.loadRecords())
        } catch {
            throw error as? ShowroomError ?? .internal("\(error)")
        }
        // Loaded placements stand for one expiry from now, time for their edges to report.
        _ = machine.records.receive(stored, nowMs: node.clock.nowMs())
        logger.info("coordinator state loaded", metadata: [
            "rooms": "\(stored.rooms.count)", "messages": "\(stored.messages.count)", "bans": "\(stored.bans.count)",
        ])
    }

    /// Registers the request handlers and timers on the node.
    func install() {
        for kind: WireMessageKind in [.roomCreate, .roomGet, .roomJoin, .roomLeave, .roomClose, .roomUpdate, .roomChatSend,
                                      .roomChatHistory, .roomInteraction, .roomPeerUpdate] + CoordinatorNode.interactionKinds {
            node.serve(kind) { [self] request, respond in routeRoomRequest(request, respond) }
        }
        node.serve(.roomList) { [self] request, respond in listRooms(request, respond) }
        node.serve(.channelPlace) { [self] request, respond in placeChannel(request, respond) }
        node.serve(.channelClaim) { [self] request, respond in claimChannel(request, respond) }
        node.serve(.kick) { [self] request, respond in kick(request, respond) }
        node.serve(.edgeChannelReport) { [self] request, respond in edgeReport(request, respond) }
        node.serve(.callEvent) { [self] request, respond in
            do throws(ShowroomError) {
                try publishCallEvents(try request.decodeBody(SignalCallEventReport.self))
                respond(.success(SignalCallEventReportResponse()))
            } catch {
                respond(.failure(error))
            }
        }
        node.serve(.channelList) { [self] _, respond in respond(.success(listChannels())) }
        node.serve(.channelUsers) { [self] request, respond in channelUsers(request, respond) }
        node.serve(.channelData) { [self] request, respond in channelData(request, respond) }
        node.serve(.banRule) { [self] request, respond in banRule(request, respond) }
        node.serve(.recording) { [self] request, respond in routeRecordingRequest(request, respond) }
        node.serve(.banList) { [self] _, respond in
            var answer = RoomBanListResponse()
            answer.bans = machine.records.bans.active(nowMs: nowMs)
            respond(.success(answer))
        }
        node.serve(.coordinatorState) { [self] request, respond in
            do throws(ShowroomError) {
                let batch = try request.decodeBody(RoomStateBatch.self)
                if !batch.catchUp { try receiveState(batch) }
                respond(.success(batch.catchUp ? try catchUpPage(for: batch) : RoomStateBatchResponse()))
            } catch {
                respond(.failure(error))
            }
        }
        node.onMembershipChange { [self] in membershipChanged() }
        node.scheduleRepeating(every: .seconds(1)) { [self] in tick() }
        membershipChanged()
    }

    var nowMs: Int64 { node.clock.nowMs() }
    var selfID: String { configuration.nodeID }

    // MARK: - Membership

    /// Alive members of `role`, with their metadata, sorted by id.
    func alive(_ role: NodeRole) -> [Member] {
        node.alive(role)
    }

    func clusterEndpoint(of id: String) -> String? { node.clusterEndpoint(of: id) }

    /// Carries out what the members' change comes to (``CoordinatorNode/membersChanged(_:nowMs:)``):
    /// the catch-up's asks, the placements on edges that are gone deleted, the hand-over sent.
    private func membershipChanged() {
        let taken = machine.membersChanged(members, nowMs: nowMs)
        if let asks = taken.asks { askForCatchUp(asks) }
        let evicted = taken.evicted
        if !evicted.isEmpty {
            let channels = evicted.map(\.channel)
            storage.write { try $0.delete(placementsOf: channels) }
            logger.info("edges gone: channels to place again", metadata: ["channels": "\(evicted.count)"])
        }
        // The hand-over: each key's new holders are sent what is held here of it; rooms held here
        // no longer are dropped.
        let handOver = taken.handOver
        carry(handOver)
        if !handOver.batches.isEmpty {
            logger.info("coordinators changed: handing over state", metadata: [
                "coordinators": "\(ownership.ring.members)", "batches": "\(handOver.batches.count)",
            ])
        }
        if !handOver.forget.isEmpty {
            let released = handOver.forget
            storage.write { try $0.delete(keys: released) }
        }
        // Once the ring is the new one: a channel this coordinator owned only in its old view
        // (cut off, it owned everything) is not numbered from the stale record it holds.
        departGoneRuns()
        // Held requests go on only now that the owners are the new members' (one whose room
        // another owns now is routed there).
        if taken.asks != nil { releaseHeld() }
    }

    // MARK: - Timers

    private func tick() {
        let now = nowMs
        // Only the owner closes a room (and publishes why), then replicates the closed room: a
        // successor closing its copy first would replicate it to the owner, which would then never
        // announce it. Every holder purges its closed copies.
        let writes = writableKeys
        let changes = machine.records.registry.tick(nowMs: now, closes: writes)
        apply(changes, replicate: true)
        tickInteractions(nowMs: now, writes: writes)
        reconcilePKForwards()
        sendRecordingOrders()
        let expired = machine.records.bans.purge(nowMs: now)
        if !expired.isEmpty { storage.write { try $0.delete(bans: expired) } }
        expirePlacements(nowMs: now)
        pruneSequences(nowMs: now)
        publishInherited()
        machine.edgesDied(in: members)
        departGoneRuns()
        sendRepairs()
        askForCatchUp(machine.takeOver.takeAsks())
        releaseHeld()
        metrics.record(machine)
    }

    /// Forgets the event numbers of channels that are gone (``CoordinatorNode/pruneSequences(nowMs:)``).
    private func pruneSequences(nowMs: Int64) {
        let pruned = machine.pruneSequences(nowMs: nowMs)
        guard !pruned.isEmpty else { return }
        storage.write { try $0.delete(sequencesOf: pruned) }
        logger.debug("event numbers of channels gone pruned", metadata: ["channels": "\(pruned.count)"])
    }

    // MARK: - Writes: persist, publish, replicate

    /// Persists `changes`, publishes their notices (where `publish` says so; a chat message's once
    /// its write is acknowledged) and sends them to each room's other holder; `done` runs once
    /// every holder answered (or left).
    func apply(_ changes: [RoomChange], replicate: Bool, publish: (RoomChange) -> Bool = { _ in true },
               then done: (() -> Void)? = nil) {
        guard !changes.isEmpty else {
            done?()
            return
        }
        storage.write { try $0.persist(changes) }
        let (stages, reconcile) = machine.roomsChanged(changes)
        send(stages)
        if reconcile { reconcilePKForwards() }
        let (now, withheld) = RoomChange.notices(of: changes.filter(publish), atMs: nowMs, withholdingChat: replicate)
        publishNotices(now)
        guard replicate else {
            done?()
            return
        }
        let then: (() -> Void)? = withheld.isEmpty ? done : { [self] in
            publishNotices(withheld)
            done?()
        }
        self.replicate(CoordinatorRecords.sends(of: changes, in: ownership), key: changes[0].room.roomID, then: then)
    }

    /// Publishes `notices` under their rooms' topics.
    private func publishNotices(_ notices: [RoomRoomNotice]) {
        for notice in notices { publisher.publish(topic: "room/\(notice.roomID)", kind: .roomNotice, body: notice) }
    }

    // MARK: - Catch-up

    /// Runs `serve` now, or once the catch-up is over when `key` is a room or channel this
    /// coordinator took over (`fail` runs instead if that takes too long).
    func afterCatchUp(of key: String, serve: @escaping () -> Void, fail: @escaping () -> Void) {
        guard seesMostOfTheCluster else { return fail() }
        guard machine.takeOver.mustWait(key) else { return serve() }
        heldForCatchUp[machine.takeOver.hold(key, deadlineMs: nowMs + Self.catchUpWaitMs)] = (serve, fail)
    }

    /// Serves the held requests whose keys need wait no more, refuses those past their deadline.
    private func releaseHeld() {
        let (serve, refuse) = machine.takeOver.release(nowMs: nowMs)
        for id in serve { heldForCatchUp.removeValue(forKey: id)?.serve() }
        for id in refuse { heldForCatchUp.removeValue(forKey: id)?.fail() }
    }

    /// Asks peers for pages of what this coordinator holds.
    private func askForCatchUp(_ asks: [CatchUp.Ask]) {
        for ask in asks {
            guard let endpoint = clusterEndpoint(of: ask.member) else {
                askForCatchUp(machine.takeOver.answered(ask, answered: false, more: false, last: ""))
                continue
            }
            node.send(.coordinatorState, body: machine.catchUpRequest(for: ask), to: endpoint, timeout: Self.peerTimeout) { [self] result in
                var answer: RoomStateBatchResponse?
                if case .success(let envelope) = result, envelope.failure == nil {
                    answer = try? envelope.decodeBody(RoomStateBatchResponse.self)
                }
                if let answer { try? receiveState(answer.batch) }
                let last = answer?.batch.rooms.last?.roomID ?? ""
                askForCatchUp(machine.takeOver.answered(ask, answered: answer != nil, more: answer?.more ?? false, last: last))
                releaseHeld()
            }
        }
    }

    /// Sends `batches` (the replicas of one write of `key`, plus those of other rooms the write
    /// changed) and runs `done` once each holder of `key` answered, failed or left: the write is
    /// acknowledged through the store (``ReplicatedStore``).
    func replicate(_ batches: [String: RoomStateBatch], key: String, then done: (() -> Void)? = nil) {
        replicate(batches, key: key, then: done, settledAnyway: false)
    }

    /// Like ``replicate(_:key:then:)``, but `settled` runs also when the write may not be
    /// acknowledged (a channel's numbered events are published then all the same: numbers are
    /// never reused, since a coordinator taking the channel over numbers in a new series, and a
    /// number withheld would leave a gap).
    func replicate(_ batches: [String: RoomStateBatch], key: String, settled: @escaping () -> Void) {
        replicate(batches, key: key, then: settled, settledAnyway: true)
    }

    /// Sends `batch` (placements, bans) to every other alive coordinator; `done` runs once each
    /// answered, failed or left.
    func replicateClusterWide(_ batch: RoomStateBatch, then done: (() -> Void)? = nil) {
        replicate(Dictionary(uniqueKeysWithValues: ownership.others.map { ($0, batch) }), key: CoordinatorRecords.tablesKey,
                  then: done, settledAnyway: false)
    }

    private func replicate(_ batches: [String: RoomStateBatch], key: String, then done: (() -> Void)?, settledAnyway: Bool) {
        let (write, effects) = machine.write(batches, of: key)
        if let done {
            // The deliberately broken rule answers at once, whether or not a replica holds the write.
            if faults.contains(.answerBeforeReplicated) {
                done()
            } else {
                waitingWrites.wait(for: write, settledAnyway: settledAnyway, done)
            }
        }
        carry(effects)
    }

    /// Sends the batches `effects` name, each record as one message (a hand-over's slices stay
    /// apart), and acknowledges the writes it may.
    private func carry(_ effects: ReplicatedStore<CoordinatorRecords>.Effects) {
        acknowledge(effects.acknowledged)
        for batch in effects.batches {
            var remaining = batch.records.count
            var held = true
            guard remaining > 0 else {
                acknowledge(machine.replicas.batchAnswered(batch, held: true).acknowledged)
                continue
            }
            for record in batch.records {
                var wire = record
                wire.changesOnly = !batch.isLatest
                send(wire, to: batch.member) { [self] answered in
                    held = held && answered
                    remaining -= 1
                    if remaining == 0 { acknowledge(machine.replicas.batchAnswered(batch, held: held).acknowledged) }
                }
            }
        }
    }

    private func acknowledge(_ writes: [Replication.Acknowledged]) {
        let seesMost = seesMostOfTheCluster
        for write in writes {
            let acknowledged = CoordinatorRecords.mayAnswer(write, in: ownership, seesMostOfTheCluster: seesMost)
            if let done = waitingWrites.settle(write.write, acknowledged: acknowledged) { done() }
        }
    }

    /// Sends every holder what it missed (the rooms as held now, the cluster-wide tables), and
    /// acknowledges the writes that waited for it once it holds them.
    func sendRepairs() {
        var repairs = machine.replicas.repairs()
        // The owner's latest of its keys: a holder with a newer record refuses it.
        CoordinatorRecords.markOwnerWrites(&repairs.batches, in: ownership)
        carry(repairs)
    }

    /// One page of what the asker of a catch-up holds among what is held here
    /// (``CoordinatorRecords/catchUpPage(for:selfID:members:pageRooms:)``).
    private func catchUpPage(for request: RoomStateBatch) throws(ShowroomError) -> RoomStateBatchResponse {
        try machine.records.catchUpPage(for: request, selfID: selfID, members: ownership.ring.members, pageRooms: Self.catchUpPageRooms)
    }

    /// Sends one batch to coordinator `holder`; `done` learns whether it holds it now.
    func send(_ batch: RoomStateBatch, to holder: String, done: @escaping (Bool) -> Void) {
        var batch = batch
        batch.from = selfID
        guard let endpoint = clusterEndpoint(of: holder) else {
            done(false)
            return
        }
        node.send(.coordinatorState, body: batch, to: endpoint, timeout: Self.peerTimeout) { [logger] result in
            switch result {
            case .failure(let error):
                logger.warning("replication to \(holder) failed", metadata: ["error": "\(error)"])
                done(false)
            case .success(let answer):
                if let failure = answer.failure {
                    logger.warning("replication to \(holder) refused", metadata: ["error": "\(failure)"])
                }
                done(answer.failure == nil)
            }
        }
    }

    /// A batch from another coordinator: replication or catch-up (``CoordinatorNode/receive(_:nowMs:)``).
    private func receiveState(_ batch: RoomStateBatch) throws(ShowroomError) {
        switch machine.receive(batch, nowMs: nowMs) {
        case .refused(let error, let sendBack):
            if let sendBack { send(sendBack, to: batch.from) { _ in } }
            throw error
        case .taken(let received, let abandoned):
            // A channel's numbers under the same key are published all the same (see
            // ``replicate(_:key:settled:)``).
            for id in abandoned { if let done = waitingWrites.settle(id, acknowledged: false) { done() } }
            apply(received.changes, replicate: false, publish: { _ in false })
            if received.tables != RoomStateBatch() { storage.write { try $0.save([received.tables]) } }
        }
    }
}
