import Foundation
import Logging
import Metrics
import Membership
import ShowroomWire
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// The thin shell around the pure ``Membership`` state machine: it feeds it the clock (a tick
/// every 10 ms) and the gossip that arrives, and carries out what it decides — sending gossip over
/// the node's links, reporting member changes. Lives on the node's loop.
final class MembershipDriver {
    private(set) var membership: Membership
    private let links: PeerLinks
    private let logger: Logger
    private let events: NodeEvents
    /// With a keyring, gossip counts only its members (and a packet only from the member its
    /// connection authenticated as).
    private let keyring: KeyringCache?
    /// Packets dropped because their sender was not the authenticated member, or not listed.
    private(set) var refusedPackets: UInt64 = 0
    private let origin = ContinuousClock.now
    private let startedAtWallClock = Date()
    private var cpu = CPUSampler()
    /// Called after every member change (state or metadata), on the loop.
    var observers: [() -> Void] = []
    /// Counts the member changes reported: derived views are kept until it moves.
    private(set) var generation: UInt64 = 0

    /// How often the state machine is ticked; its own timers are multiples of this.
    static let tickInterval = Duration.milliseconds(10)
    /// How often this member's load is measured and, when it changed, disseminated.
    static let loadRefreshInterval = Duration.seconds(5)
    /// When the first measurement is taken: soon, so that a young cluster shows its CPU use.
    static let firstLoadRefresh = Duration.seconds(1)

    init(id: MemberID, metadata: MemberMetadata, settings: MembershipSettings, loop: EventLoop,
         links: PeerLinks, keyring: KeyringCache? = nil, logger: Logger, events: NodeEvents) {
        self.links = links
        self.keyring = keyring
        self.logger = logger
        self.events = events
        membership = Membership(id: id, metadata: metadata, settings: settings, now: .zero,
                                randomSeed: UInt64.random(in: .min ... .max))
        loop.scheduleRepeating(every: Self.tickInterval) { [weak self] in self?.tick() }
        loop.scheduleTimer(after: Self.firstLoadRefresh) { [weak self] in self?.refreshLoad() }
        loop.scheduleRepeating(every: Self.loadRefreshInterval) { [weak self] in self?.refreshLoad() }
        loop.scheduleRepeating(every: Self.idleLinkSweepInterval) { [weak self] in self?.closeIdleLinks() }
    }

    /// How often links to endpoints that are no member's are looked at, and how long such a link
    /// must have been idle to be closed.
    static let idleLinkSweepInterval = Duration.seconds(10)
    static let idleLinkTime = Duration.seconds(30)

    /// Closes the links to endpoints no known, live member has (left, dead, or moved away) once
    /// they have been idle a while: what a member that comes and goes leaves behind is reclaimed.
    private func closeIdleLinks() {
        let live = Set(membership.members.filter { $0.state != .dead && $0.state != .left }.map(\.metadata.clusterEndpoint))
        let closed = links.closeIdleLinks(keeping: live, idle: Self.idleLinkTime)
        if !closed.isEmpty { logger.info("closed idle links to endpoints of no live member: \(closed.joined(separator: ", "))") }
    }

    private var now: Duration { origin.duration(to: .now) }

    /// Starts joining through `seeds` (none: this member starts a cluster of its own).
    func join(seeds: [String]) {
        let others = seeds.filter { $0 != membership.localMember.metadata.clusterEndpoint }
        perform(membership.join(seeds: others, now: now))
    }

    /// Announces a graceful leave.
    func leave() {
        perform(membership.leave(now: now))
    }

    /// Handles a gossip message from another member; `user` is the member id its connection
    /// authenticated as (the ZAP `User-Id`), nil on plain links.
    func receive(_ envelope: WireEnvelope, authenticatedAs user: String? = nil) {
        var message: GossipMessage
        do {
            message = try GossipCodec.decode(envelope.body)
        } catch {
            logger.debug("unreadable gossip", metadata: ["from": "\(envelope.senderNode)", "error": "\(error)"])
            return
        }
        if let keyring {
            guard let admitted = Self.admitted(message, from: user, by: keyring) else {
                refusedPackets += 1
                logger.debug("gossip refused", metadata: ["sender": "\(message.sender.id)", "authenticated": "\(user ?? "-")"])
                return
            }
            message = admitted
        }
        perform(membership.receive(message, now: now))
    }

    /// `message` as far as `keyring` admits it: nil when its sender is not the member the
    /// connection authenticated as; otherwise without updates about members the keyring does not
    /// list (a member cannot introduce an unlisted one).
    static func admitted(_ message: GossipMessage, from user: String?, by keyring: KeyringCache) -> GossipMessage? {
        guard let user, user == message.sender.id.rawValue, keyring.admits(user) else { return nil }
        let listed = { (update: MemberUpdate) in keyring.admits(update.id.rawValue) }
        switch message {
        case .ping(var ping):
            ping.updates = ping.updates.filter(listed)
            return .ping(ping)
        case .pingRequest(var request):
            guard keyring.admits(request.target.id.rawValue) else { return nil }
            request.updates = request.updates.filter(listed)
            return .pingRequest(request)
        case .ack(var ack):
            ack.updates = ack.updates.filter(listed)
            return .ack(ack)
        case .nack:
            return message
        case .pushPull(var pushPull):
            pushPull.members = pushPull.members.filter(listed)
            return .pushPull(pushPull)
        case .broadcast(var broadcast):
            broadcast.updates = broadcast.updates.filter(listed)
            return .broadcast(broadcast)
        }
    }

    private func tick() {
        perform(membership.tick(now: now))
    }

    /// Measures this process's CPU use and disseminates the load when it changed noticeably.
    private func refreshLoad() {
        var metadata = membership.localMember.metadata
        let cpuPercent = (cpu.sample() * 10).rounded() / 10
        guard Self.cpuChangedNoticeably(from: metadata.load.cpuPercent, to: cpuPercent) else { return }
        metadata.load.cpuPercent = cpuPercent
        perform(membership.updateMetadata(metadata, now: now))
    }

    /// Whether a CPU reading is worth disseminating: it moved by a point, or, below 2 %, by half
    /// the value last disseminated (0.2 at least), so that a lightly loaded process does not read
    /// 0 % for ever. Every change raises the incarnation and goes to every member, so not less.
    static func cpuChangedNoticeably(from previous: Double, to current: Double) -> Bool {
        abs(current - previous) >= min(1, max(0.2, previous / 2))
    }

    /// Disseminates this member's channel and connection counts when they changed.
    func updateLoad(channels: Int, connections: Int) {
        var metadata = membership.localMember.metadata
        guard metadata.load.channels != channels || metadata.load.connections != connections else { return }
        metadata.load.channels = channels
        metadata.load.connections = connections
        perform(membership.updateMetadata(metadata, now: now))
    }

    private func perform(_ directives: [MembershipDirective]) {
        for directive in directives {
            switch directive {
            case .send(let message, let endpoint):
                var envelope = WireEnvelope()
                envelope.kind = .gossip
                do {
                    envelope.body = Data(try GossipCodec.encode(message))
                } catch {
                    logger.error("cannot encode gossip", metadata: ["error": "\(error)"])
                    continue
                }
                links.sendOneWay(envelope, to: endpoint)
            case .memberChanged(let change):
                report(change)
            }
        }
    }

    private func report(_ change: MemberChange) {
        let atMs = Int64(Date().timeIntervalSince1970 * 1000)
        let id = change.member.id
        let state = change.member.state
        if id != membership.localMember.id && (state == .dead || state == .left) {
            links.close(change.member.metadata.clusterEndpoint)
        }
        let previous = change.previousState.map(\.rawValue) ?? "new"
        generation &+= 1
        defer { for observer in observers { observer() } }
        if change.previousState == state {
            logger.debug("member \(id) metadata changed", metadata: ["incarnation": "\(change.member.incarnation)"])
            return
        }
        let members = membership.members
        for s in [MemberState.alive, .suspect, .dead, .left] {
            Gauge(label: "cluster.members", dimensions: [("state", s.rawValue)]).record(members.filter { $0.state == s }.count)
        }
        logger.info("member \(id) \(previous) -> \(state.rawValue)", metadata: [
            "member": "\(id)", "incarnation": "\(change.member.incarnation)", "role": "\(change.member.metadata.role)",
        ])
        events.write("event member node=\(membership.localMember.id) member=\(id) from=\(previous) state=\(state.rawValue) incarnation=\(change.member.incarnation) at_ms=\(atMs)")
    }

    /// The status document: every known member as this node sees it.
    func clusterStatus() -> AdminClusterStatus {
        var status = AdminClusterStatus()
        let now = self.now
        let local = membership.localMember.id
        status.reporter = local.rawValue
        status.reporterLocalHealth = UInt32(membership.localHealth)
        status.members = membership.members.map { member in
            var m = AdminMemberStatus()
            m.id = member.id.rawValue
            m.role = member.metadata.role
            m.state = member.state.wire
            m.clusterEndpoint = member.metadata.clusterEndpoint
            m.clientEndpoint = member.metadata.clientEndpoint
            m.adminEndpoint = member.metadata.adminEndpoint
            m.eventsEndpoint = member.metadata.eventsEndpoint
            m.clientCurvePublicKey = member.metadata.clientCurvePublicKey
            m.webSocketEndpoint = member.metadata.webSocketEndpoint
            m.incarnation = member.incarnation
            m.version = member.metadata.version
            m.load = member.metadata.load.wire
            if member.id != local, let heard = member.lastHeard {
                m.lastHeardMsAgo = (now - heard).milliseconds
            }
            return m
        }
        let gossip = links.traffic[.gossip] ?? PeerLinks.Traffic()
        status.reporterTraffic.messagesSent = gossip.messagesSent
        status.reporterTraffic.bytesSent = gossip.bytesSent
        status.reporterTraffic.messagesReceived = gossip.messagesReceived
        status.reporterTraffic.bytesReceived = gossip.bytesReceived
        status.reporterTraffic.elapsedMs = now.milliseconds
        return status
    }
}

/// This process's CPU use between two samples, in percent of one core.
struct CPUSampler {
    private var lastCPU = Self.processCPUSeconds()
    private var lastWall = ContinuousClock.now

    mutating func sample() -> Double {
        let cpu = Self.processCPUSeconds()
        let wall = ContinuousClock.now
        let seconds = lastWall.duration(to: wall).seconds
        defer { lastCPU = cpu; lastWall = wall }
        return seconds > 0 ? max(0, (cpu - lastCPU) / seconds * 100) : 0
    }

    static func processCPUSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
