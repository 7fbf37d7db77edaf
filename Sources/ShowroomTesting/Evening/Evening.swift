import Foundation
import ShowroomKit
import ShowroomWire
import Synchronization
import ZeroMQ

/// The tokens an evening's users get, minted as a business server would.
public struct EveningTokens: Sendable {
    /// An RTC token for `channel` and `uid`, with publish privileges if `publisher`.
    public var rtc: @Sendable (_ channel: String, _ uid: UInt32, _ publisher: Bool) throws -> String
    /// A signaling (RTM) login token for `uid`.
    public var login: @Sendable (_ uid: UInt32) throws -> String

    public init(rtc: @escaping @Sendable (String, UInt32, Bool) throws -> String, login: @escaping @Sendable (UInt32) throws -> String) {
        self.rtc = rtc
        self.login = login
    }
}

/// A host's whole evening on a running cluster, every interaction together: hosts live in their
/// rooms, viewers watching, and a seeded ``EveningSchedule`` of calls, PKs, co-host seats, swipes,
/// chat and operations (drains, SIGKILLs, scaling, restarts), while observers that do not share
/// the SDK's state check the ``InvariantBook``'s invariants continuously.
public final class Evening: Sendable {
    public let schedule: EveningSchedule
    public let book: InvariantBook
    let cluster: any EveningCluster
    let seeds: [String]
    let tokens: EveningTokens
    let webhooks: WebhookReceiver?
    let report: @Sendable (String) -> Void
    /// Distinguishes this run's rooms from an earlier run's on the same cluster (not part of the schedule).
    let nonce = String(UInt32.random(in: 0 ... .max), radix: 36)

    /// What the observers know of the schedule's effects, written by the steps.
    struct Watch {
        /// Rooms whose host is in an accepted call: the show is paused until the step ends.
        var paused: [Int: Int] = [:]
        /// When each room's show last came back (a pausing step ended).
        var steadySince: [Int: ContinuousClock.Instant] = [:]
        /// Publishers other than the host that a room's audience may see, with their windows.
        var allowed: [Int: [(uid: UInt32, from: ContinuousClock.Instant, until: ContinuousClock.Instant?)]] = [:]
        /// The last SIGKILL of an edge.
        var killedAt: ContinuousClock.Instant?
        /// No status check before this (an operation moved things and the reports follow).
        var statusQuietUntil: ContinuousClock.Instant = .now
        /// The last step started, for violation messages.
        var lastStep = "(none)"
    }

    let watch = Mutex(Watch())
    /// The operations, one at a time: one that overruns its slot holds the next back.
    let operations = OperationLine()

    /// - Parameters:
    ///   - webhooks: A receiver the cluster's coordinators post to: the event numbering is checked
    ///     on what it got (nil: not checked, said so in the figures).
    ///   - report: Progress lines (step starts, violations as they happen).
    public init(schedule: EveningSchedule, cluster: any EveningCluster, seeds: [String], tokens: EveningTokens,
                webhooks: WebhookReceiver? = nil, report: @escaping @Sendable (String) -> Void = { _ in }) {
        self.schedule = schedule
        self.book = InvariantBook(seed: schedule.settings.seed)
        self.cluster = cluster
        self.seeds = seeds
        self.tokens = tokens
        self.webhooks = webhooks
        self.report = report
    }

    func roomID(_ room: Int) -> String { "ev\(schedule.settings.seed)x\(nonce)r\(room)" }
    func hostUID(_ room: Int) -> UInt32 { 1000 + UInt32(room) + 1 }
    func viewerUID(_ room: Int, _ index: Int) -> UInt32 { 20_000 + UInt32(room) * 100 + UInt32(index) }
    func swiperUID(_ swiper: Int) -> UInt32 { 30_000 + UInt32(swiper) }

    /// Runs the evening: the cast joins, the schedule plays out with the observers checking, then
    /// everyone leaves and the cluster must come back to where it was.
    ///
    /// - Parameter sampled: Called at the start, after the warm-up (a fifth of the evening, at
    ///   most 5 minutes) and at the end, with the cluster's processes' footprints.
    public func run(sampled: @escaping @Sendable (_ when: String, _ footprints: [String: ProcessFootprint]) -> Void = { _, _ in })
        async throws
    {
        let settings = schedule.settings
        let baseline = try await Baseline(try await cluster.statusJSON())
        sampled("start", try await footprints())
        let cast = try await Cast.assemble(self)
        report("cast ready: \(settings.rooms) rooms, \(settings.rooms * settings.viewersPerRoom) viewers, \(settings.swipers) swipers")

        let start = ContinuousClock.now
        watch.withLock { watch in
            for room in 0..<settings.rooms { watch.steadySince[room] = start }
        }
        let observers = Task { await observe(cast) }
        let warmUp = min(settings.duration / 5, .seconds(300))
        let sampler = Task {
            try? await Task.sleep(until: start + warmUp)
            if !Task.isCancelled, let footprints = try? await footprints() { sampled("after warm-up", footprints) }
        }
        await withTaskGroup(of: Void.self) { group in
            for step in schedule.steps {
                group.addTask {
                    try? await Task.sleep(until: start + step.at)
                    self.watch.withLock { $0.lastStep = step.description }
                    self.report("step \(step)")
                    await self.perform(step, cast)
                }
            }
        }
        // A last look with everything ended.
        try? await Task.sleep(for: .seconds(2))
        observers.cancel()
        _ = await observers.value
        sampler.cancel()
        await cast.leave(self)
        await checkBaseline(baseline)
        await checkEventNumbering()
        sampled("end", try await footprints())
    }

    /// Each running process's memory, descriptors and size gauges.
    func footprints() async throws -> [String: ProcessFootprint] {
        var footprints = try await cluster.processIDs().mapValues { ProcessFootprint(pid: $0) }
        let document = (try? JSONSerialization.jsonObject(with: Data(try await cluster.statusJSON().utf8))) as? [String: Any]
        for member in document?["members"] as? [[String: Any]] ?? [] where member["state"] as? String == "alive" {
            guard let id = member["id"] as? String, let admin = member["admin_endpoint"] as? String, !admin.isEmpty,
                  let names = ProcessFootprint.keptGauges[member["role"] as? String ?? ""], footprints[id] != nil else { continue }
            for name in names {
                footprints[id]?.kept[name] = try? await adminMetric("showroom_" + name, at: admin)
            }
        }
        return footprints
    }

    func step(_ holds: Bool, _ message: @autoclosure () -> String) {
        book.check(.stepsDoWhatTheySay, holds, step: watch.withLock { $0.lastStep }, message())
    }
}

// MARK: - The observers

extension Evening {
    /// Every 250 ms: what each viewer decoded since the last look (who may be seen), and how long
    /// since each viewer last saw its own host (the show plays); every 3 s the status view.
    func observe(_ cast: Cast) async {
        var nextStatus = ContinuousClock.now + .seconds(3)
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let now = ContinuousClock.now
            let watch = self.watch.withLock { $0 }
            for viewer in cast.viewers.joined() {
                checkSightings(of: viewer, cast, watch, now: now)
                checkShow(of: viewer, cast, watch, now: now)
            }
            if now >= nextStatus, now >= watch.statusQuietUntil {
                nextStatus = now + .seconds(3)
                await checkStatus(cast)
            }
        }
    }

    func checkSightings(of viewer: EveningViewer, _ cast: Cast, _ watch: Watch, now: ContinuousClock.Instant) {
        for (key, seen) in viewer.watching.sightings.take() {
            guard let room = cast.room(of: key.channel), key.uid != viewer.uid else { continue }
            let host = cast.hosts[room]
            if key.uid == host.uid {
                // Pictures inside the call, a second after it connected and half a second before
                // its end was heard (the host resumes as it ends; the event may come after).
                let window = host.callWindow.withLock { $0 }
                let inCall = window.connected.map { connected in
                    let end = window.ended.map { $0 - .milliseconds(500) }
                    let from = connected + .seconds(1)
                    return (seen.first > from && end.map { seen.first < $0 } ?? true) || (seen.last > from && end.map { seen.last < $0 } ?? true)
                } ?? false
                book.check(.rightPeopleSeen, !inCall, step: watch.lastStep,
                           "viewer \(viewer.uid) of room \(viewer.room) decoded host \(host.uid) in \(key.channel) while the host was in a call")
                continue
            }
            let slack = Duration.milliseconds(1500)
            let allowed = (watch.allowed[room] ?? []).contains { entry in
                entry.uid == key.uid && seen.first >= entry.from - slack && (entry.until.map { seen.last <= $0 + slack } ?? true)
            }
            book.check(.rightPeopleSeen, allowed, step: watch.lastStep,
                       "viewer \(viewer.uid) of room \(viewer.room) decoded uid \(key.uid) in \(key.channel) (room \(room)) outside any PK or seat of it")
        }
    }

    func checkShow(of viewer: EveningViewer, _ cast: Cast, _ watch: Watch, now: ContinuousClock.Instant) {
        let room = viewer.room
        guard watch.paused[room] == nil else { return }
        let killed = watch.killedAt.map { now < $0 + .seconds(10) } ?? false
        let limit: Duration = killed ? .seconds(2) : .seconds(1)
        var since = watch.steadySince[room] ?? now
        if let killedAt = watch.killedAt, killedAt > since { since = killedAt }
        guard now >= since + limit else { return }
        let host = cast.hosts[room]
        let last = viewer.watching.sightings.last(channel: host.live.channel, uid: host.uid)
        let fresh = last.map { $0 >= now - limit } ?? false
        book.check(.showPlays, fresh, step: watch.lastStep,
                   "viewer \(viewer.uid) of room \(room) has not decoded host \(host.uid) for \(last.map { "\(($0.duration(to: now)).milliseconds) ms" } ?? "ever") (limit \(limit.milliseconds) ms); "
                   + "the viewer's engine said: \(viewer.watching.diary.recent(.seconds(6), now: now)); the host's: \(host.diary.recent(.seconds(6), now: now))")
    }

    func checkStatus(_ cast: Cast) async {
        guard let json = try? await cluster.statusJSON(),
              let document = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return book.check(.statusAgrees, false, step: watch.withLock { $0.lastStep }, "the status view could not be read")
        }
        // An operation that started meanwhile moves things: this look is not taken.
        guard ContinuousClock.now >= watch.withLock({ $0.statusQuietUntil }) else { return }
        let channels = document["channels"] as? [[String: Any]] ?? []
        let lastStep = watch.withLock { $0.lastStep }
        for host in cast.hosts {
            let entries = channels.filter { $0["name"] as? String == host.live.channel }
            book.check(.statusAgrees, entries.count == 1, step: lastStep,
                       "room \(host.room)'s channel \(host.live.channel) is listed \(entries.count) times")
            guard entries.count == 1 else { continue }
            let edge = entries[0]["edge"] as? String ?? ""
            let relays = entries[0]["relays"] as? [String] ?? []
            let hostEdge = await host.engine.edgeID(of: host.live) ?? ""
            book.check(.statusAgrees, hostEdge == edge, step: lastStep,
                       "room \(host.room)'s channel is listed on \(edge), its host publishes to \(hostEdge)")
            for viewer in cast.viewers[host.room] {
                let viewerEdge = await viewer.engine.edgeID(of: ChannelConnection(channel: host.live.channel, uid: viewer.uid)) ?? ""
                book.check(.statusAgrees, viewerEdge == edge || relays.contains(viewerEdge), step: lastStep,
                           "viewer \(viewer.uid) decodes room \(host.room) from \(viewerEdge), listed on \(edge) relays \(relays)")
            }
        }
    }

    /// What the cluster held before the evening: everything the evening made must be gone again.
    struct Baseline {
        var channels: Set<String>
        var connections: Int
        var activeCalls: Int
        var interactions: Int

        init(_ json: String) async throws {
            let document = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
            channels = Set((document["channels"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
            // A member killed or gone keeps its last load in the view: only the alive count.
            connections = (document["members"] as? [[String: Any]] ?? []).filter { $0["state"] as? String == "alive" }.reduce(0) { sum, member in
                sum + (((member["load"] as? [String: Any])?["connections"] as? Int) ?? 0)
            }
            activeCalls = (document["calls"] as? [[String: Any]] ?? []).filter { $0["state"] as? String != "ended" }.count
            interactions = (document["interactions"] as? [Any] ?? []).count
        }
    }

    func checkBaseline(_ baseline: Baseline) async {
        var now: Baseline?
        try? await eventually("the cluster back at its baseline", timeout: .seconds(20)) { [cluster] in
            now = try await Baseline(try await cluster.statusJSON())
            return now!.channels.isSubset(of: baseline.channels) && now!.connections <= baseline.connections
                && now!.activeCalls <= baseline.activeCalls && now!.interactions <= baseline.interactions
        }
        let step = "(the end)"
        guard let now else { return book.check(.backToBaseline, false, step: step, "the status view could not be read") }
        book.check(.backToBaseline, now.channels.isSubset(of: baseline.channels), step: step,
                   "channels left over: \(now.channels.subtracting(baseline.channels).sorted())")
        book.check(.backToBaseline, now.connections <= baseline.connections, step: step,
                   "\(now.connections) client connections on the edges, \(baseline.connections) before")
        book.check(.backToBaseline, now.activeCalls <= baseline.activeCalls, step: step, "\(now.activeCalls) calls not ended")
        book.check(.backToBaseline, now.interactions <= baseline.interactions, step: step, "\(now.interactions) interactions still listed")
    }

    /// Each channel's webhooks, de-duplicated by notice id as a business server does: numbered
    /// 1, 2, 3 … without a gap in each series (a coordinator that takes a channel over numbers in
    /// a new one), and a notice id always carries the same event.
    func checkEventNumbering() async {
        guard let webhooks else { return }
        // Quiet for two seconds: the coordinators have posted what they had.
        var count = -1
        try? await eventually("the webhooks quiet", timeout: .seconds(20)) {
            let now = webhooks.posts.count
            defer { count = now }
            if now == count { try await Task.sleep(for: .seconds(2)); return webhooks.posts.count == now }
            return false
        }
        var byNotice: [String: RoomChannelEvent] = [:]
        var sequences: [String: [UInt64]] = [:]
        for post in webhooks.posts where (200..<300).contains(post.status) {
            guard let event = post.event, event.channel.hasPrefix("ev\(schedule.settings.seed)x\(nonce)") || event.channel.hasPrefix("call-") else { continue }
            if let held = byNotice[event.noticeID] {
                book.check(.eventsNumbered, held.type == event.type && held.uid == event.uid && held.sequence == event.sequence, step: "(webhooks)",
                           "notice \(event.noticeID) delivered with two different events")
                continue
            }
            byNotice[event.noticeID] = event
            // The series is in the notice id (`<channel>/<series>-<n>`; a webhook carries no
            // field of its own for it).
            let series = event.noticeID.lastIndex(of: "-").map { String(event.noticeID[..<$0]) } ?? event.channel
            sequences[series, default: []].append(event.sequence)
        }
        for (series, numbers) in sequences.sorted(by: { $0.key < $1.key }) {
            let sorted = numbers.sorted()
            book.check(.eventsNumbered, sorted == Array(1...UInt64(sorted.count)), step: "(webhooks)",
                       "channel \(series) numbered \(sorted.prefix(20)) (gaps or repeats)")
        }
    }
}

/// Runs bodies one after another in the order they arrive: an operation on the cluster that
/// overruns its slot in the schedule (a start that waits for the members to converge) holds the
/// next one back rather than overlapping it (a SIGKILL of the edge a scale-up is waiting for).
actor OperationLine {
    private var last: Task<Void, Never>?

    func run(_ body: @escaping @Sendable () async -> Void) async {
        let previous = last
        let task = Task {
            await previous?.value
            await body()
        }
        last = task
        await task.value
    }
}
