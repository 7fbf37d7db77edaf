import CallAPI
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf

/// 1v1 calls between a few users, each an app doing what the SDK's `CallClient` does: log in to
/// signaling, poll for notices without end (logging in again when the session is gone, and asking
/// about the call in progress once polls work again after failing), dial, accept or reject,
/// cancel, report the first frame, hang up. Requests go to any call-signal node, which passes
/// them to the user's owner. What each client believes (its state, from the notices it took) and
/// what it was acknowledged (accepts, ends) are kept for the checks.
final class CallWorkload {
    /// CallAPI's states, as the SDK takes them.
    typealias State = CallState

    /// One app's signaling client.
    struct Client {
        let uid: UInt32
        let token: String
        var session = ""
        /// Bumped with each login: a poll loop of an older session stops.
        var generation = 0
        /// A request (other than polls) in flight: an app's user does one thing at a time.
        var busy = false
        /// A poll failed, the user moved to another owner or a look-up of its call went unanswered:
        /// the call in progress is asked about after the next poll.
        var interrupted = false
        /// The node that owns the user as the last answer told (a poll answered by another:
        /// the user moved, and the call in progress is asked about, as after an interruption).
        var nodeID = ""
        /// The current (or last) call and this side's state in it, from the notices taken.
        var callID = ""
        var state = State.idle
        /// The SDK's stale-notice filter.
        var filter = CallNoticeFilter()
    }

    /// A call whose accept a callee was answered.
    struct Accepted: Equatable {
        let caller: UInt32
        let callee: UInt32
    }

    private var rng: SimulationRNG
    private let cluster: SimulatedCluster
    private var network: SimulatedNetwork { cluster.network }
    private(set) var clients: [UInt32: Client] = [:]
    let uids: [UInt32]
    /// Calls acknowledged accepted, by id.
    private(set) var accepted: [String: Accepted] = [:]
    /// Calls a party was answered it ended (hang-up, cancel, reject).
    private(set) var endedByClient: Set<String> = []
    private var operations = 0

    static let pollWaitMs: Int64 = 5_000
    /// A dial's calling timeout: every call rings, or connects, or is over well before the checks.
    static let callingTimeoutMs: UInt32 = 8_000

    init(rng: SimulationRNG, cluster: SimulatedCluster, users: Int = 6) {
        self.rng = rng
        self.cluster = cluster
        uids = (1...users).map { UInt32(2_000 + $0) }
        for uid in uids {
            // Issued before the run starts (clocks are skewed), valid all run; the salt is fixed so
            // that the requests' bytes are the same every run.
            let token = (try? RTMTokenBuilder.buildToken(
                appID: SimulationApp.appID, appCertificate: SimulationApp.certificate, userID: String(uid),
                expire: 86_400, issueTs: UInt32(Simulation.startMs / 1000) - 600, salt: uid)) ?? ""
            clients[uid] = Client(uid: uid, token: token)
        }
    }

    /// Every user logs in and starts polling.
    func start() {
        for uid in uids { login(uid) }
    }

    private func anyNode() -> String { rng.pick(cluster.callSignalIDs) }

    // MARK: Sessions and notices

    private func login(_ uid: UInt32) {
        guard let client = clients[uid] else { return }
        network.ask(.callLogin, SignalLoginRequest.with {
            $0.uid = uid
            $0.token = client.token
        }, as: SignalLoginResponse.self, to: anyNode(), timeoutMs: 3_000, label: "call \(uid) login") { [unowned self] result in
            guard case .success(let answer) = result else {
                return network.scheduler.after(500) { [unowned self] in login(uid) }
            }
            let lost = clients[uid]!.session.isEmpty == false
            clients[uid]!.session = answer.sessionID
            clients[uid]!.nodeID = answer.nodeID
            clients[uid]!.generation += 1
            if clients[uid]!.state == .idle { clients[uid]!.state = .prepared }
            // A session lost and opened again: the call it was in is over here (the SDK's
            // callLostWithSession).
            if lost, clients[uid]!.state.isActive { clients[uid]!.state = .failed }
            poll(uid, generation: clients[uid]!.generation)
        }
    }

    private func poll(_ uid: UInt32, generation: Int) {
        guard let client = clients[uid], client.generation == generation, !client.session.isEmpty else { return }
        network.ask(.callPoll, SignalPollRequest.with {
            $0.sessionID = client.session
            $0.maxWaitMs = UInt32(Self.pollWaitMs)
        }, as: SignalPollResponse.self, to: anyNode(), timeoutMs: Self.pollWaitMs + 3_000, label: "call \(uid) poll") {
            [unowned self] result in
            guard clients[uid]?.generation == generation else { return }
            switch result {
            case .success(let answer):
                for notice in answer.notices { take(notice, uid: uid) }
                if !answer.nodeID.isEmpty, answer.nodeID != clients[uid]!.nodeID {
                    clients[uid]!.nodeID = answer.nodeID
                    clients[uid]!.interrupted = true
                }
                if clients[uid]!.interrupted {
                    clients[uid]!.interrupted = false
                    resynchronize(uid)
                }
                poll(uid, generation: generation)
            case .failure(let error) where error.code == .notLoggedIn:
                login(uid)
            case .failure:
                clients[uid]!.interrupted = true
                network.scheduler.after(200) { [unowned self] in poll(uid, generation: generation) }
            }
        }
    }

    /// A notice as the SDK takes it: stale or repeated ones dropped, an older call's ignored.
    private func take(_ notice: SignalNotice, uid: UInt32) {
        let state = State(rawValue: Int(notice.state)) ?? .failed
        guard var client = clients[uid], client.filter.take(callID: notice.callID, sequence: notice.sequence, ends: state.endsCall) else { return }
        if !client.callID.isEmpty, client.callID != notice.callID, state != .calling {
            clients[uid] = client
            return
        }
        client.callID = notice.callID
        client.state = state
        clients[uid] = client
        if state == .connecting {
            // The app joins the call's channel and decodes the other side.
            network.scheduler.after(100 + rng.exponential(meanMs: 200)) { [unowned self] in firstFrame(uid, callID: notice.callID) }
        }
    }

    /// After polls failed: a call in progress its owner no longer holds is over here too.
    private func resynchronize(_ uid: UInt32) {
        guard let client = clients[uid], client.state.isActive else { return }
        let callID = client.callID
        network.ask(.callToken, action(client, callID), as: SignalCallActionResponse.self, to: anyNode(), timeoutMs: 3_000,
                    label: "call \(uid) resync \(callID)") { [unowned self] result in
            guard case .failure(let error) = result else { return }
            guard [.unknownCall, .callEnded, .notYourCall].contains(error.code) else {
                // No answer: asked again after the next poll, as the SDK does.
                if [.unavailable, .deadlineExceeded].contains(error.code) { clients[uid]?.interrupted = true }
                return
            }
            guard clients[uid]?.callID == callID, clients[uid]?.state.isActive == true else { return }
            clients[uid]!.state = .failed
        }
    }

    private func action(_ client: Client, _ callID: String) -> SignalCallActionRequest {
        SignalCallActionRequest.with {
            $0.sessionID = client.session
            $0.callID = callID
        }
    }

    // MARK: What users do

    /// One user does one thing, as its state allows.
    func step() {
        operations += 1
        let uid = rng.pick(uids)
        guard let client = clients[uid], !client.session.isEmpty, !client.busy else { return }
        let callID = client.callID
        let roll = rng.int(in: 0...99)
        switch client.state {
        case .idle, .prepared, .failed:
            guard roll < 60 else { return }
            let callee = rng.pick(uids.filter { $0 != uid })
            request(uid, .callDial, SignalDialRequest.with {
                $0.sessionID = client.session
                $0.callee = callee
                $0.type = .video
                $0.timeoutMs = Self.callingTimeoutMs
            }, as: SignalDialResponse.self, what: "dial \(callee)") { [unowned self] answer in
                // The caller knows its call from the answer; its state comes with the notices.
                let call = answer.call
                if call.endReason.isEmpty, clients[uid]?.state.isActive == false { clients[uid]!.callID = call.callID }
            }
        case .calling:
            let mine = clients[uid]!
            if isCallee(uid, callID) {
                if roll < 50 {
                    request(uid, .callAccept, action(mine, callID), as: SignalCallActionResponse.self, what: "accept \(callID)", callID: callID) {
                        [unowned self] answer in
                        accepted[callID] = Accepted(caller: answer.call.caller, callee: answer.call.callee)
                    }
                } else if roll < 65 {
                    request(uid, .callReject, action(mine, callID), as: SignalCallActionResponse.self, what: "reject \(callID)", callID: callID) {
                        [unowned self] _ in endedByClient.insert(callID)
                    }
                }
            } else if roll < 15 {
                request(uid, .callCancel, action(mine, callID), as: SignalCallActionResponse.self, what: "cancel \(callID)", callID: callID) {
                    [unowned self] _ in endedByClient.insert(callID)
                }
            }
        case .connecting, .connected:
            guard roll < 30 else { return }
            request(uid, .callHangup, action(client, callID), as: SignalCallActionResponse.self, what: "hangup \(callID)", callID: callID) {
                [unowned self] _ in endedByClient.insert(callID)
            }
        }
    }

    private func isCallee(_ uid: UInt32, _ callID: String) -> Bool { callID.hasPrefix("\(uid)-") }

    private func firstFrame(_ uid: UInt32, callID: String) {
        guard let client = clients[uid], client.callID == callID, client.state == .connecting else { return }
        network.ask(.callFirstFrame, action(client, callID), as: SignalCallActionResponse.self, to: anyNode(), timeoutMs: 3_000,
                    label: "call \(uid) first frame \(callID)") { _ in }
    }

    /// Sends a user's request about call `callID` (nil: a dial). An answer that the call is
    /// unknown or over ends it here, as the SDK's `CallClient` does.
    private func request<Answer: SwiftProtobuf.Message>(_ uid: UInt32, _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message,
                                                        as: Answer.Type, what: String, callID: String? = nil,
                                                        acknowledged: @escaping (Answer) -> Void) {
        clients[uid]!.busy = true
        network.ask(kind, body, as: Answer.self, to: anyNode(), timeoutMs: 3_000, label: "call op \(operations) \(uid) \(what)") {
            [unowned self] result in
            clients[uid]!.busy = false
            switch result {
            case .success(let answer): acknowledged(answer)
            case .failure(let error) where [.unknownCall, .callEnded].contains(error.code):
                guard let callID, clients[uid]?.callID == callID, clients[uid]?.state.isActive == true else { return }
                clients[uid]!.state = .failed
            case .failure: break
            }
        }
    }
}

extension CallWorkload {
    /// What the clients believe and were acknowledged, for the checks.
    var views: Invariants.CallClientViews {
        var views = Invariants.CallClientViews()
        for (uid, client) in clients where !client.callID.isEmpty {
            views.current[uid] = (client.callID, client.state.isActive)
        }
        views.accepted = Set(accepted.keys)
        return views
    }
}

extension CallState {
    /// Whether a side in this state is in a call.
    var isActive: Bool { self == .calling || self == .connecting || self == .connected }
}
