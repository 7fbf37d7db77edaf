import Calls
import Logging
import Membership
import NodeRuntime
import ReplicatedOwnership
import Routing
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// The call-signal node's shell, confined to the node's loop: it decodes requests, asks the node's
/// machine (``CallSignalNode``: sessions, calls, dial reservations, mailboxes, the token cache,
/// replicated user records) and carries out what it decides — answers, notices to other nodes,
/// replica batches, seals and call events through the coordinators.
///
/// A request for a user is served by the user's owner (``OwnerRing`` over the alive call-signal
/// nodes), passed on once from any other node; a call by its callee's owner. A call's channel is
/// private: its tokens are bound to it and to each party's uid and last ``callTokenSeconds``
/// (renewed through `CALL_TOKEN`), and when the call ends both parties are banned from it for as
/// long as their last tokens last (``seal(_:parties:)``).
///
/// Users are replicated to their successor within ``flushInterval`` of every change: when a node
/// dies, its successor goes on with its users' sessions and the calls it owned. A call not
/// replicated yet is lost: its parties are told it failed, so nobody stays stuck in one.
final class CallSignalShell {
    /// The machine with this shell's notices and the random source it was given (the system's,
    /// or a seeded one in a simulation).
    typealias Machine = CallSignalNode<SignalNotice, AnyRandomNumberGenerator>

    let node: any NodeServices
    let configuration: NodeConfiguration
    let logger: Logger
    /// What the node decides.
    var machine: Machine
    /// The parked polls' answers, by the id the machine knows them by.
    var polls: [UInt64: Node.Responder] = [:]
    var nextPoll: UInt64 = 1
    /// The alive call-signal nodes, as the membership says now: where requests are passed.
    var callSignalRing = MembershipView.ring(.callsignal)
    /// Messages for coordinators, sent until one answers.
    lazy var deliveries = Deliveries(node: node, role: .coordinator, logger: logger, timeout: Self.peerTimeout)
    /// Notices for users owned by other call-signal nodes, sent until the user's owner takes them.
    lazy var noticeDeliveries = Deliveries(node: node, role: .callsignal, logger: logger, timeout: Self.peerTimeout)

    /// How often changed records are sent to the successors: a node that dies loses at most this
    /// much of its latest changes (its successor's timers still end what they touch).
    static let flushInterval = Duration.milliseconds(5)
    /// How long a request passed to another node may take.
    static let peerTimeout = Duration.seconds(2)
    /// The longest a poll is held.
    static let maxPollMs: UInt32 = 20_000
    /// The most uids one presence request names.
    static let maxPresenceUIDs = 100

    init(node: any NodeServices, configuration: NodeConfiguration, logger: Logger,
         settings: CallSettings = CallSettings(), heartbeatTimeoutMs: Int64 = 10_000, callTokenSeconds: UInt32 = 120,
         random: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.node = node
        self.configuration = configuration
        self.logger = logger
        machine = Machine(selfID: configuration.nodeID, settings: settings, heartbeatTimeoutMs: heartbeatTimeoutMs,
                          callTokenSeconds: callTokenSeconds, random: AnyRandomNumberGenerator(random))
    }

    var selfID: String { configuration.nodeID }
    var nowMs: Int64 { node.clock.nowMs() }
    var callTokenSeconds: UInt32 { machine.callTokenSeconds }
    var presence: Presence { machine.presence }
    var book: CallBook { machine.book }
    var records: VersionedStore<UserRecord> { machine.records }

    /// Registers the request handlers and the timers on the node.
    func install() {
        node.serve(.callLogin) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalLoginRequest.self) }) else { return }
            atOwner(of: body.uid, request, respond) { [self] in login(body, respond) }
        }
        for kind: WireMessageKind in [.callLogout, .callRenewToken, .callPoll, .callDial, .callCancel, .callAccept,
                                      .callReject, .callHangup, .callFirstFrame, .callToken] {
            node.serve(kind) { [self] request, respond in
                guard let uid = respond.answering({ try Self.uid(ofSessionIn: request) }) else { return }
                let wait = kind == .callPoll
                    ? Duration.milliseconds(Int64(min((try? request.decodeBody(SignalPollRequest.self).maxWaitMs) ?? 0, Self.maxPollMs)))
                    : .zero
                atOwner(of: uid, request, respond, timeout: Self.peerTimeout + wait) { [self] in serveSession(request, respond) }
            }
        }
        node.serve(.callPresence) { [self] request, respond in presenceQuery(request, respond) }
        node.serve(.callRing) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalRingRequest.self) }) else { return }
            respond(Result { () throws(ShowroomError) in try ring(body) }.outcome)
        }
        node.serve(.callPartyAction) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalPartyAction.self) }) else { return }
            respond(Result { () throws(ShowroomError) in try partyAction(body) }.outcome)
        }
        node.serve(.callPartyCheck) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalPartyCheck.self) }) else { return }
            respond(Result { () throws(ShowroomError) in try partyCheck(body) }.outcome)
        }
        node.serve(.callChannelActivity) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalChannelActivities.self) }) else { return }
            for activity in body.activities.prefix(1_000) {
                perform(machine.channelActivity(channel: activity.channel, uid: activity.uid, joined: activity.joined, nowMs: nowMs))
            }
            respond(.success(SignalChannelActivitiesResponse()))
        }
        node.serve(.callList) { [self] _, respond in
            var answer = SignalCallListResponse()
            answer.nodeID = selfID
            answer.calls = book.calls.values.sorted { ($0.startedAtMs, $0.id) < ($1.startedAtMs, $1.id) }
                .map { SignalCallStatus($0, nodeID: selfID) }
            respond(.success(answer))
        }
        node.serve(.callDeliver) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalDeliverRequest.self) }) else { return }
            // A notice for a user owned elsewhere now goes there: its sender tries again.
            if let stray = body.notices.first(where: { machine.owner(of: $0.to) != selfID }) {
                return respond(.failure(.unavailable("uid \(stray.to) is owned by another call-signal node now; deliver it there")))
            }
            for notice in body.notices { deliver(notice) }
            respond(.success(SignalDeliverResponse()))
        }
        node.serve(.callReplica) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalReplicaBatch.self) }) else { return }
            respond(Result { () throws(ShowroomError) in
                if body.catchUp {
                    let page = machine.catchUpPage(for: request.senderNode, after: body.catchUpAfter, limit: maxRecordsPerBatch)
                    return SignalReplicaBatchResponse.with {
                        $0.newer = page.entries.map(SignalUserRecord.init)
                        $0.more = page.more
                    }
                }
                let (newer, directives) = machine.replicaBatch(try body.entries(), nowMs: nowMs)
                perform(directives)
                return SignalReplicaBatchResponse.with { $0.newer = newer.map(SignalUserRecord.init) }
            }.outcome)
        }
        node.onMembershipChange { [self] in membersChanged() }
        node.scheduleRepeating(every: .milliseconds(100)) { [self] in tick() }
        node.scheduleRepeating(every: Self.flushInterval) { [self] in perform(machine.flush()) }
        membersChanged()
    }

    /// The members that are dead or departed, not merely suspect (a suspicion is often refuted
    /// within a second).
    var goneMembers: Set<String> {
        Set(node.membersOnLoop.filter { $0.state == .dead || $0.state == .left }.map(\.nodeID)).subtracting([selfID])
    }

    func membersChanged() {
        perform(machine.membersChanged(alive: callSignalRing.value(of: node).members, gone: goneMembers, nowMs: nowMs))
    }

    func tick() {
        perform(machine.tick(nowMs: nowMs, gone: goneMembers))
        deliveries.retryDue()
        noticeDeliveries.retryDue()
        CallMetrics.recordSizes(of: machine)
    }

    // MARK: - Routing

    /// Serves `request` with `locally` at the owner of `uid`: here, or passed on once and its answer
    /// relayed.
    func atOwner(of uid: UInt32, _ request: WireEnvelope, _ respond: Node.Responder,
                 timeout: Duration = peerTimeout, locally: @escaping () -> Void) {
        let owner = callSignalRing.value(of: node).owner(of: UserRecord.key(of: uid)) ?? selfID
        guard !request.forwarded, owner != selfID, let endpoint = node.clusterEndpoint(of: owner) else {
            locally()
            return
        }
        // An owner whose connection broke is most likely dead: the client retries in a moment,
        // by when the membership has moved the user to its successor (this node or another).
        guard !node.connectionBroken(to: endpoint) else {
            return respond(.failure(.unavailable("call-signal node \(owner), which owns uid \(uid), is unreachable; retry in a moment")))
        }
        node.forward(request, to: endpoint, timeout: timeout) { result in
            switch result {
            case .success(let answer): respond(.relayed(answer))
            case .failure(let error):
                respond(.failure(.unavailable(
                    "call-signal node \(owner), which owns uid \(uid), did not answer (\(error.message)); retry in a moment")))
            }
        }
    }

    /// The uid a session id names (`<uid>-<secret>`), read from the request's body.
    static func uid(ofSessionIn request: WireEnvelope) throws(ShowroomError) -> UInt32 {
        let sessionID: String
        switch request.kind {
        case .callLogout: sessionID = try request.decodeBody(SignalLogoutRequest.self).sessionID
        case .callRenewToken: sessionID = try request.decodeBody(SignalRenewTokenRequest.self).sessionID
        case .callPoll: sessionID = try request.decodeBody(SignalPollRequest.self).sessionID
        case .callDial: sessionID = try request.decodeBody(SignalDialRequest.self).sessionID
        default: sessionID = try request.decodeBody(SignalCallActionRequest.self).sessionID
        }
        do { return try Machine.uid(ofSession: sessionID) } catch { throw ShowroomError(error) }
    }

    /// Asks the machine, passing a refusal on as it travels.
    @discardableResult
    func decide<T>(_ ask: (inout Machine) throws -> T) throws(ShowroomError) -> T {
        do {
            return try ask(&machine)
        } catch let refusal as Machine.Refusal {
            throw ShowroomError(refusal)
        } catch {
            throw .internal("\(error)")  // the machine throws refusals only
        }
    }
}
