import Calls
import Logging
import Membership
import NodeRuntime
import ReplicatedOwnership
import Routing
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// The call-signal node's shell, confined to the node's loop: signaling sessions (``Presence``) of
/// the users this node owns, the calls it owns (``CallBook``), and the routing between nodes.
///
/// Who owns what (``OwnerRing`` over the alive call-signal nodes):
/// - a user (key `uid/<uid>`) is owned by one node: its session, its notices and what call it is
///   in live there. A request reaching another node is passed on to the owner.
/// - a call is owned by its callee's owner, which decides it against the one record; the call id
///   starts with the callee's uid, so any node finds the owner from the id alone.
/// - a call's notices go to each party's owner (`CALL_DELIVER` when that is another node), which
///   queues them for the party's session until its next poll.
/// - dialling is the two-key operation: the caller's owner reserves the caller (refusing a caller
///   already in a call), then asks the callee's owner to ring (`CALL_RING`), which refuses an
///   offline callee and ends the call busy for a callee in a call; a refused or failed ring drops
///   the reservation. The reservation and the callee's record both clear on the call's terminal
///   notice.
///
/// A call's channel is private: its name (`call-` and random digits) is minted here, its tokens are
/// bound to it and to each party's uid and last two minutes (renewed through `CALL_TOKEN` while the
/// call goes on), and edges refuse wildcard tokens for such channels. When the call ends both
/// parties are banned from it for as long as their last tokens last (``seal(_:parties:)``), so nobody can
/// enter it again, and the bans of a busy cluster stay few.
///
/// Users are replicated to their successor (``UserRecord``, see `CallSignalShell+Replication`): when
/// a node dies, its successor goes on with its users' sessions (they stay logged in; their polls
/// simply reach the new owner) and with the calls it owned (timers, hang-up, sequence numbers). A
/// call that was not replicated yet is lost: its parties are told it failed
/// (``verifyCallsOfLostNodes()``), so nobody stays stuck in one.
final class CallSignalShell {
    let node: any NodeServices
    let configuration: NodeConfiguration
    let logger: Logger
    var presence: Presence
    var book: CallBook
    /// How often each user this node owns may start calls.
    var dials = DialRateLimit()
    /// The call each user this node owns is in (or reserved for while dialling), with its owner.
    var callOf: [UInt32: UserRecord.InCall] = [:]
    /// Notices waiting for each session, and its parked poll.
    var mailboxes: [String: Mailbox] = [:]
    var random = SystemRandomNumberGenerator()
    /// The records of the users this node owns or holds a replica of.
    var records: ReplicatedStore<UserRecord>
    /// Users whose record may have changed since the last flush.
    var dirty: Set<UInt32> = []
    /// When each deleted record was deleted (its tombstone is dropped after a while).
    var tombstones: [String: Int64] = [:]
    /// When the calls of lost nodes were last checked.
    var lastVerifyMs: Int64 = 0
    /// Call tokens handed out, by call id and party: each party's token is minted once and sent
    /// again in every notice of its call (minting deflates, which costs more than the rest of a
    /// notice), until it is a quarter of its life old. Dropped within a second of the call's end.
    var mintedTokens: [String: [UInt32: MintedToken]] = [:]
    /// The alive call-signal nodes: who owns a user.
    var callSignalRing = MembershipView.ring(.callsignal)
    /// The alive call-signal nodes as ``membersChanged()`` last handled them.
    var ownersSeen: [String]?

    struct MintedToken {
        let token: String
        let issuedMs: Int64
    }
    /// Messages for coordinators, sent until one answers.
    lazy var deliveries = Deliveries(node: node, role: .coordinator, logger: logger, timeout: Self.peerTimeout)

    /// A session's notices and its waiting poll.
    struct Mailbox {
        var notices: [SignalNotice] = []
        var poll: (respond: Node.Responder, untilMs: Int64)?
        var tokenWillExpire = false
    }

    /// How often changed records are sent to the successors: a node that dies loses at most this
    /// much of its latest changes (its successor's timers still end what they touch).
    static let flushInterval = Duration.milliseconds(5)
    /// How long a deleted record's tombstone is kept.
    static let tombstoneLifetimeMs: Int64 = 60_000
    /// How long a request passed to another node may take.
    static let peerTimeout = Duration.seconds(2)
    /// The longest a poll is held.
    static let maxPollMs: UInt32 = 20_000
    /// The most notices kept for a session between polls (the oldest go first).
    static let mailboxLimit = 256
    /// The most uids one presence request names.
    static let maxPresenceUIDs = 100
    /// How long a call token lasts: a party renews it (`CALL_TOKEN`) while the call goes on, so an
    /// ended call's channel needs sealing only this long.
    let callTokenSeconds: UInt32

    init(node: any NodeServices, configuration: NodeConfiguration, logger: Logger,
         settings: CallSettings = CallSettings(), heartbeatTimeoutMs: Int64 = 10_000, callTokenSeconds: UInt32 = 120) {
        self.callTokenSeconds = callTokenSeconds
        self.node = node
        self.configuration = configuration
        self.logger = logger
        presence = Presence(heartbeatTimeoutMs: heartbeatTimeoutMs)
        book = CallBook(settings: settings)
        records = ReplicatedStore(selfID: configuration.nodeID, role: .callsignal)
    }

    var selfID: String { configuration.nodeID }
    var nowMs: Int64 { node.clock.nowMs() }

    /// Registers the request handlers and the timer on the node.
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
        node.serve(.callChannelActivity) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalChannelActivities.self) }) else { return }
            channelActivities(body)
            respond(.success(SignalChannelActivitiesResponse()))
        }
        node.serve(.callList) { [self] _, respond in
            var answer = SignalCallListResponse()
            answer.nodeID = selfID
            answer.calls = book.calls.values.sorted { $0.startedAtMs < $1.startedAtMs }.map { call in
                SignalCallStatus.with {
                    $0.callID = call.id
                    $0.caller = call.caller
                    $0.callee = call.callee
                    $0.type = SignalCallType(call.type)
                    $0.phase = call.phase.rawValue
                    $0.channel = call.channel
                    $0.nodeID = selfID
                    $0.startedAtMs = call.startedAtMs
                    $0.endReason = call.end?.reason.rawValue ?? ""
                }
            }
            respond(.success(answer))
        }
        node.serve(.callDeliver) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalDeliverRequest.self) }) else { return }
            for notice in body.notices { queue(notice) }
            respond(.success(SignalDeliverResponse()))
        }
        node.serve(.callReplica) { [self] request, respond in
            guard let body = respond.answering({ try request.decodeBody(SignalReplicaBatch.self) }) else { return }
            respond(Result { () throws(ShowroomError) in
                try receiveReplicas(body)
                return SignalReplicaBatchResponse()
            }.outcome)
        }
        node.onMembershipChange { [self] in membersChanged() }
        node.scheduleRepeating(every: .milliseconds(100)) { [self] in tick() }
        node.scheduleRepeating(every: Self.flushInterval) { [self] in replicateChanges() }
        membersChanged()
    }

    // MARK: - Routing

    /// The node owning `uid`.
    func owner(of uid: UInt32) -> String {
        callSignalRing.value(of: node).owner(of: "uid/\(uid)") ?? selfID
    }

    /// Serves `request` with `locally` at the owner of `uid`: here, or passed on once and its answer
    /// relayed.
    func atOwner(of uid: UInt32, _ request: WireEnvelope, _ respond: Node.Responder,
                 timeout: Duration = peerTimeout, locally: @escaping () -> Void) {
        let owner = owner(of: uid)
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
        guard sessionID.utf8.count <= 64, let dash = sessionID.firstIndex(of: "-"),
              let uid = UInt32(sessionID[..<dash]), uid != 0 else {
            throw ShowroomError(.notLoggedIn, "'\(sessionID.prefix(64))' is not a session id; log in and use the id it returns")
        }
        return uid
    }
}

extension ShowroomError {
    /// A call refusal as it travels.
    init(_ refusal: CallRefusal) {
        let code: ShowroomError.Code = switch refusal.code {
        case .invalidArgument: .invalidArgument
        case .callerInCall: .callerInCall
        case .calleeOffline: .calleeOffline
        case .unknownCall: .unknownCall
        case .notYourCall: .notYourCall
        case .stateMismatch: .callStateMismatch
        case .callEnded: .callEnded
        }
        self.init(code, refusal.message)
    }
}
