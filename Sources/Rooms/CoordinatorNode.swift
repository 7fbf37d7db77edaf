// Pure: no I/O, no clock, no randomness of its own.
import ReplicatedOwnership
import Routing
import ShowroomWire

/// What one room-coordinator decides and keeps between requests, as a pure state machine: the
/// records it holds and replicates (``CoordinatorRecords`` in a ``ReplicatedStore``), the keys it
/// takes over from others (``TakeOver``), the channel events numbered and not yet published
/// (``ChannelEventOutbox``) and what the edges were told (``EdgeInstructions``).
///
/// Events go in as plain values with the time (an edge's report, a membership look, a tick);
/// what to publish, persist and replicate comes out for the shell, which owns the sockets,
/// timers and the callbacks of requests in flight. Whether this coordinator sees most of the
/// cluster is the shell's look at the members, passed in.
public struct CoordinatorNode: Sendable {
    /// How long after a start every edge has reported its channels (edges report every second):
    /// before, which channels are hosted is not known, so no channel's numbers are pruned.
    public static let reportsSettleMs: Int64 = 10_000
    /// How often each PK is checked at the peer room's owner.
    public static let pkCheckEveryMs: Int64 = 5_000

    /// The records this coordinator holds and replicates: rooms and channel event numbers to
    /// owner and successor, the cluster-wide tables (placements, bans, and event numbers for
    /// newcomers) to every coordinator.
    public var replicas: ReplicatedStore<CoordinatorRecords>
    /// The rooms and channels this coordinator takes over from others: the catch-up before it
    /// writes them, the new term each begins.
    public var takeOver: TakeOver
    /// Channel events numbered here and not yet published.
    public var unpublished = ChannelEventOutbox()
    /// What the edges are told of the rooms owned here: stages and PK forwards. Every stage goes
    /// to every edge each 5 ticks (seconds), so an edge that started since, or missed a change,
    /// catches up.
    public var edgeInstructions = EdgeInstructions(refreshTicks: 5)
    /// When this coordinator started (its clock).
    public let startedAtMs: Int64
    /// When the PKs are checked next.
    public private(set) var nextPKCheckMs: Int64 = 0
    /// The deliberately broken rule of a simulation's mutant: this coordinator writes on either
    /// side of a partition (``seesMostOfTheCluster(alive:known:)`` is always true). False in
    /// every process.
    public var writesWithoutMajority = false

    /// A coordinator `selfID` started at `startedAtMs` holding `records` (as loaded from its store).
    public init(records: CoordinatorRecords, selfID: String, startedAtMs: Int64) {
        replicas = ReplicatedStore(records, selfID: selfID, role: .coordinator, everyMemberKeys: [CoordinatorRecords.tablesKey])
        takeOver = TakeOver(selfID: selfID)
        self.startedAtMs = startedAtMs
    }

    /// The records held: rooms with their chat (`registry`), where channels run (`directory`),
    /// channel event numbers (`sequencer`), bans (`bans`).
    public var records: CoordinatorRecords {
        get { replicas.records }
        _modify { yield &replicas.records }
    }

    /// Who holds rooms and channel event numbers: owner and successor.
    public var ownership: Replication { replicas.replication }

    /// Whether a coordinator that sees `alive` of the cluster's `known` members alive sees most
    /// of the cluster: more than half of them, of every role (the edges and call-signal nodes
    /// are witnesses, so a cluster of two coordinators still writes when one dies). One cut off
    /// with a minority writes nothing and acknowledges nothing: the other side goes on, and
    /// nothing either side was told is lost when the partition heals. `known`: the members that
    /// did not leave (dead ones count until their tombstones expire).
    public func seesMostOfTheCluster(alive: Int, known: Int) -> Bool {
        // The deliberately broken rule writes on either side of a partition.
        writesWithoutMajority || alive * 2 > known
    }

    /// The keys this coordinator may write now: those it owns and has caught up on, and none
    /// while it sees less than half of the cluster (`seesMostOfTheCluster`). A timer's write
    /// follows the same rule as a client's: a copy taken over and not caught up on, or held on
    /// the smaller side of a partition, may be stale, and what a tick decides from it would undo
    /// what the owner did.
    public func writableKeys(seesMostOfTheCluster: Bool) -> (String) -> Bool {
        { [ownership, takeOver] key in seesMostOfTheCluster && ownership.owns(key) && !takeOver.mustWait(key) }
    }

    // MARK: - Channel events

    /// Channel events numbered here, with what they came from: the shell persists and replicates
    /// the records of `channels`, and publishes `events` once the successors hold their numbers.
    public struct Numbered: Sendable, Equatable {
        /// Events an earlier owner (or this one before a restart) numbered and may not have
        /// published, taken out of the records now: published first, at once.
        public var inherited: [RoomChannelEvent] = []
        /// The events numbered now, in number order per channel.
        public var events: [RoomChannelEvent] = []
        /// The activities the events were numbered from (or, for departures, made of them).
        public var activities: [RoomChannelActivity] = []
        /// The channels whose records changed, even without an event (an activity's mark, who is where).
        public var channels: Set<String> = []

        /// Nothing numbered.
        public init() {}
    }

    /// What an edge's report says of its channels, taken before its activities are numbered.
    public struct ReportTaken: Sendable, Equatable {
        /// Whether the edge began to drain with this report: nothing more is placed on it.
        public var beganDraining = false
        /// The placements made of channels this coordinator decides for that several edges host
        /// without one (``ChannelDirectory/placeSplitChannels(among:edges:owned:nowMs:)``), to
        /// persist and hand to the other coordinators.
        public var placed: [RoomChannelPlacement] = []
        /// The answer to the edge: the channels it hosts away from their placement, with where
        /// their clients go (``ChannelDirectory/elsewhere(on:edges:owned:)``).
        public var answer = RoomEdgeChannelReportResponse()

        /// Nothing taken.
        public init() {}
    }

    /// Takes an edge's report of its drain and channels (``ChannelDirectory/edgeReported(_:run:draining:channels:edgeAlive:nowMs:)``).
    /// A report that lists its channels, taken while this coordinator sees most of the cluster,
    /// also places the channels both sides of a healed partition let joiners in on, and is
    /// answered with the edge's strays. `edges`: the alive edges that serve clients; `edgeAlive`:
    /// whether the reporting edge is alive.
    public mutating func edgeReported(_ report: RoomEdgeChannelReport, edges: [ChannelDirectory.Edge], edgeAlive: Bool,
                                      seesMostOfTheCluster: Bool, nowMs: Int64) -> ReportTaken {
        var taken = ReportTaken()
        taken.beganDraining = records.directory.edgeReported(report.edgeID, run: report.origin, draining: report.draining,
                                                             channels: report.hasChannels_p ? report.channels : nil,
                                                             edgeAlive: edgeAlive, nowMs: nowMs)
        guard report.hasChannels_p, seesMostOfTheCluster else { return taken }
        let writes = writableKeys(seesMostOfTheCluster: true)
        taken.placed = records.directory.placeSplitChannels(among: report.channels.map(\.name), edges: edges, owned: writes, nowMs: nowMs)
        taken.answer.elsewhere = records.directory.elsewhere(on: report.edgeID, edges: edges, owned: writes)
        return taken
    }

    /// What an edge's report of activities comes to.
    public enum ReportNumbering: Sendable, Equatable {
        /// None is numbered: this coordinator may not write one of the channels now, for
        /// `reason` (the edge sends them again, to the owner its view names then).
        case refused(reason: String)
        /// Numbered (an activity numbered before, or no news, is skipped).
        case numbered(Numbered)
    }

    /// Numbers the activities of edge `edge`'s report: only a channel's owner numbers its events,
    /// and only once it holds the numbers given so far, so one channel it may not write refuses
    /// the whole report. A channel's creation or end is announced only when it is the channel's
    /// own (``ChannelDirectory/announces(_:of:from:)``); a new series begins in a channel taken
    /// over (``TakeOver/beginsTerm(_:of:)``).
    public mutating func number(_ activities: [RoomChannelActivity], from edge: String, seesMostOfTheCluster: Bool,
                                nowMs: Int64) -> ReportNumbering {
        let writes = writableKeys(seesMostOfTheCluster: seesMostOfTheCluster)
        if let channel = activities.map(\.channel).first(where: { !writes($0) }) {
            return .refused(reason: !seesMostOfTheCluster ? "sees less than half of the cluster"
                : ownership.owns(channel) ? "is taking over channel \(channel) from the others"
                : "does not own channel \(channel) (\(ownership.owner(of: channel)) does)")
        }
        var numbered = Numbered()
        // What an earlier owner numbered and may not have published goes out first.
        numbered.inherited = takeInherited(of: Set(activities.map(\.channel)).sorted(), writes: writes)
        for activity in activities where records.directory.announces(activity.type, of: activity.channel, from: edge) {
            let newSeries = takeOver.beginsTerm(.channelSeries, of: activity.channel) ? takeOver.termMs : nil
            numbered.channels.insert(activity.channel)
            guard let event = records.sequencer.number(activity, edge: edge, nowMs: nowMs, newSeriesAtMs: newSeries) else { continue }
            takeOver.began(.channelSeries, of: activity.channel)
            numbered.activities.append(activity)
            numbered.events.append(event)
            unpublished.numbered(event)
        }
        return .numbered(numbered)
    }

    /// Numbers the leaves nobody will report, in the channels this coordinator may write: of
    /// users whose every connection was on an edge run that is gone (the edge died, or reported
    /// from a new run), and the channel's end when nobody is left on an edge hosting it
    /// (``ChannelEventSequencer/depart(from:isGone:endsChannel:nowMs:newSeriesAtMs:)``). Nil when
    /// no channel has such users; else the activities are made of the events.
    public mutating func departGoneRuns(seesMostOfTheCluster: Bool, nowMs: Int64) -> Numbered? {
        let directory = records.directory
        let isGone = { (edge: String, run: String) in directory.isGone(edge: edge, run: run, nowMs: nowMs) }
        let channels = records.sequencer.channelsWithDepartures(isGone: isGone).filter(writableKeys(seesMostOfTheCluster: seesMostOfTheCluster))
        guard !channels.isEmpty else { return nil }
        var numbered = Numbered()
        numbered.channels = Set(channels)
        for channel in channels {
            let newSeries = takeOver.beginsTerm(.channelSeries, of: channel) ? takeOver.termMs : nil
            let departed = records.sequencer.depart(from: channel, isGone: isGone, endsChannel: { edge in
                directory.announces(.channelDestroyed, of: channel, from: edge)
            }, nowMs: nowMs, newSeriesAtMs: newSeries)
            if !departed.isEmpty { takeOver.began(.channelSeries, of: channel) }
            for event in departed { unpublished.numbered(event) }
            numbered.events += departed
        }
        numbered.activities = numbered.events.map { event in
            RoomChannelActivity.with {
                $0.type = event.type
                $0.channel = event.channel
                $0.uid = event.uid
                $0.reason = event.reason
                $0.atMs = event.atMs
            }
        }
        return numbered
    }

    /// The owner's write of the event numbers of `channels`, in name order: each channel's
    /// record with the batch for each of its replicas.
    public func sequenceWrites(of channels: Set<String>) -> [(sequence: RoomChannelSequence, batches: [String: RoomStateBatch])] {
        channels.sorted().map { channel in
            let sequence = records.sequencer.sequence(of: channel)
            var batch = RoomStateBatch()
            batch.ownerWrite = true
            batch.sequences = [sequence]
            return (sequence, Dictionary(uniqueKeysWithValues: ownership.replicas(of: channel).map { ($0, batch) }))
        }
    }

    /// `events` have their numbers replicated: what ``ChannelEventOutbox`` lets out now, to
    /// publish; their records hold them as published.
    public mutating func settled(_ events: [RoomChannelEvent]) -> [RoomChannelEvent] {
        let due = unpublished.settled(events)
        records.sequencer.published(due)
        return due
    }

    /// The events that the records of `channels` (nil: every channel holding any) hold as
    /// unpublished and that do not wait here, in the channels `writes` lets this coordinator
    /// write: numbered by a coordinator that owned the channel before, or by this one before a
    /// restart, which may have died before publishing them. Taken out as published, to publish
    /// (an event published twice is de-duplicated by its notice id).
    public mutating func takeInherited(of channels: [String]? = nil, writes: (String) -> Bool) -> [RoomChannelEvent] {
        let owned = (channels ?? Array(records.sequencer.channelsWithUnpublished)).filter(writes)
        let due = unpublished.republish(owned.flatMap { records.sequencer.unpublished(of: $0) })
        records.sequencer.published(due)
        return due
    }

    // MARK: - Recordings

    /// The recording orders to send every edge now (nil: none due): the running API recordings
    /// of the channels and what `rules` record in the rooms this coordinator owns (``RecordingOrders/due(_:)``).
    public mutating func recordingOrdersDue(rules: RecordingRules) -> [RoomRecordingOrder]? {
        let owned = records.registry.rooms.values.lazy.filter { [ownership] in ownership.owns($0.roomID) }
        let orders = records.recordings.orders(rules: rules, rooms: owned) { [ownership] in ownership.owns($0) }
        return records.recordings.due(orders)
    }

    // MARK: - Timers

    /// Forgets the event numbers of channels that are gone (``ChannelEventSequencer/prune(nowMs:hosted:)``)
    /// and returns them. Every holder prunes on its own by the same rule, so nothing is
    /// replicated. Nothing in the first ``reportsSettleMs`` after the start: the edges' reports
    /// (which channels are hosted) are not all in yet.
    public mutating func pruneSequences(nowMs: Int64) -> [String] {
        guard nowMs - startedAtMs >= Self.reportsSettleMs else { return [] }
        return records.sequencer.prune(nowMs: nowMs) { [directory = records.directory] in directory.isInUse($0) }
    }

    /// The checks of the PKs of the rooms `writes` lets this coordinator write, each a question
    /// to the peer room's owner, every ``pkCheckEveryMs`` (none between): a peer that is not in
    /// it any more (its end was lost with a coordinator that died) ends this side too
    /// (``peerAnswered(_:result:nowMs:)``).
    public mutating func pkChecksDue(nowMs: Int64, writes: (String) -> Bool) -> [InteractionPlan] {
        guard nowMs >= nextPKCheckMs else { return [] }
        nextPKCheckMs = nowMs + Self.pkCheckEveryMs
        return records.registry.pkChecks(begunBefore: nowMs - Self.pkCheckEveryMs, owns: writes).map { roomID, check in
            var plan = InteractionPlan()
            plan.next = .ask(PeerQuestion(step: .check, roomID: roomID, update: check))
            return plan
        }
    }

    // MARK: - What the edges are told

    /// What `changes` (written or received here) change at the edges: the stages to send now (of
    /// the rooms this coordinator owns whose stage changed; a purged room's channel is told no
    /// more, its removal went out while it was closed), and whether the PK forwards are to be
    /// reconciled (a PK began or ended, a room closed).
    public mutating func roomsChanged(_ changes: [RoomChange]) -> (stages: [RoomStage], reconcileForwards: Bool) {
        for change in changes where change.purged { edgeInstructions.forgetStage(of: change.room.channel) }
        let stages = stages(of: changes.filter { !$0.purged }.map(\.room), onlyChanged: true)
        return (stages, changes.contains { [.pkStarted, .pkEnded].contains($0.event?.type) || $0.room.state == .closed })
    }

    /// The stages of the rooms this coordinator owns among `rooms`: all of them (`onlyChanged`
    /// false: the periodic refresh, which also reaches an edge that started since), or those
    /// whose stage changed since last sent (``EdgeInstructions/stages(of:onlyChanged:owns:)``).
    public mutating func stages(of rooms: [RoomRoom], onlyChanged: Bool) -> [RoomStage] {
        edgeInstructions.stages(of: rooms, onlyChanged: onlyChanged) { [ownership] in ownership.owns($0) }
    }

    /// One tick (a second) passed: every stage of the rooms owned here when the refresh is due,
    /// else none.
    public mutating func tickStages() -> [RoomStage] {
        guard edgeInstructions.tick() else { return [] }
        return stages(of: records.registry.rooms.values.sorted { $0.roomID < $1.roomID }, onlyChanged: false)
    }

    /// The PK forwards to stop and to start now: what the PKs of the rooms this coordinator owns
    /// need, on their channels' origin edges, against what the edges run
    /// (``EdgeInstructions/reconcile(wanted:)``).
    public mutating func reconcileForwards() -> (stop: [PKForward], start: [(roomID: String, forward: PKForward)]) {
        let wanted = EdgeInstructions.wantedForwards(of: records.registry.rooms.values, owns: { [ownership] in ownership.owns($0) },
                                                     origin: { [directory = records.directory] in directory.originEdge(of: $0) })
        return edgeInstructions.reconcile(wanted: wanted)
    }

    /// An edge answered the start of `forward` for room `roomID` (`refusal` nil: started). Running
    /// when it started or had it running already (a command whose answer was lost), and noted only
    /// while the room is in a PK still; else the next reconciliation does not take it for running
    /// (the host has not joined its channel yet: the next tick tries again).
    public mutating func forwardAnswered(_ forward: PKForward, for roomID: String, refusal: ShowroomError?) {
        guard refusal == nil || refusal?.code == .forwardAlreadyStarted,
              records.registry.room(roomID)?.interaction.kind == .pk else { return }
        edgeInstructions.started(forward, for: roomID)
    }

    // MARK: - Membership

    /// The alive coordinators are `coordinators` now: the hand-over of what is held here to each
    /// key's new holders (``ReplicatedStore/membersChanged(to:)``). Rooms held here no more (a
    /// member this one stood in for is back) are dropped once handed over, their channels told
    /// nothing more from here: a stale copy must not tick, expire or be served as if current.
    public mutating func coordinatorsChanged(to coordinators: [String]) -> ReplicatedStore<CoordinatorRecords>.Effects {
        let channels = records.registry.rooms.mapValues(\.channel)
        let handOver = replicas.membersChanged(to: coordinators)
        for roomID in handOver.forget { if let channel = channels[roomID] { edgeInstructions.forgetStage(of: channel) } }
        return handOver
    }

    // MARK: - Replication

    /// The owner's write of `key`, sending each member its batch of `batches`. A write carries
    /// what changed (a chat message, not the room's whole chat): a member that missed an earlier
    /// one is still owed it after holding this one. The cluster-wide tables are owed as one key.
    public mutating func write(_ batches: [String: RoomStateBatch],
                               of key: String) -> (write: UInt64, effects: ReplicatedStore<CoordinatorRecords>.Effects) {
        let tables = key == CoordinatorRecords.tablesKey
        let sends = batches.mapValues { batch in (keys: tables ? [key] : CoordinatorRecords.keys(of: batch), records: [batch]) }
        return replicas.write(key, sends: sends, isLatest: false)
    }

    /// The request asking `ask.member` for a page of what this coordinator holds (a catch-up),
    /// naming the members as this coordinator sees them.
    public func catchUpRequest(for ask: CatchUp.Ask) -> RoomStateBatch {
        var request = RoomStateBatch()
        request.catchUp = true
        request.afterRoomID = ask.after
        request.members = takeOver.ring?.members ?? [takeOver.selfID]
        request.from = takeOver.selfID
        return request
    }

    // MARK: - Copies from other coordinators

    /// What a batch from another coordinator comes to.
    public enum Receipt: Sendable {
        /// Refused before anything of it was taken (``CoordinatorRecords/refusal(of:selfID:in:)``);
        /// `sendBack`, when not nil, holds the newer records here that the sender is to have.
        case refused(ShowroomError, sendBack: RoomStateBatch?)
        /// Taken (``CoordinatorRecords/receive(_:nowMs:)``): what to persist, and the writes of
        /// rooms whose record here was replaced, which are never acknowledged (a callback that runs
        /// settled or not runs all the same).
        case taken(CoordinatorRecords.Received, abandoned: [UInt64])
    }

    /// Takes `batch` from coordinator `batch.from` (a replica of a write, a repair, a hand-over
    /// or a catch-up page), or refuses it.
    public mutating func receive(_ batch: RoomStateBatch, nowMs: Int64) -> Receipt {
        if let refusal = records.refusal(of: batch, selfID: takeOver.selfID, in: ownership) {
            let sendBack = refusal.sendBack.isEmpty ? nil : CoordinatorRecords.merged(records.records(of: refusal.sendBack))
            return .refused(refusal.error, sendBack: sendBack)
        }
        let received = records.receive(batch, nowMs: nowMs)
        return .taken(received, abandoned: received.replaced.flatMap { replicas.abandonWrites(of: $0) })
    }
}
