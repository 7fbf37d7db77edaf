public import CallAPI
internal import Ownership
internal import ShowroomWire
import Synchronization

/// CallAPI's states, reasons, events and call types, by the same names and numbers.
public typealias CallState = CallAPI.CallState
public typealias CallStateReason = CallAPI.CallStateReason
public typealias CallEvent = CallAPI.CallEvent
public typealias CallType = CallAPI.CallType

/// A 1v1 call as one side sees it (CallAPI's `eventInfo` and `onCallConnected` arguments).
public struct CallInfo: Sendable, Equatable {
    /// The server-minted call id.
    public var callID: String
    public var caller: UInt32
    public var callee: UInt32
    public var type: CallType
    /// The call's private channel (empty once it ended).
    public var channel: String
    /// The caller's extension (CallAPI's user and call extensions).
    public var extensionInfo: [String: String]
    /// How it ended (`cancelled`, `rejected`, `hungUp`, `timedOut`, `busy`, `partyLeft`,
    /// `tooLong`), by whom and with what words; empty while it goes on.
    public var endReason: String
    public var endedBy: UInt32
    public var endMessage: String
    /// When it started, was accepted, connected and ended (Unix ms; 0 for not yet).
    public var startedAtMs: Int64
    public var acceptedAtMs: Int64
    public var connectedAtMs: Int64
    public var endedAtMs: Int64

    /// The other party of `uid`.
    public func remote(of uid: UInt32) -> UInt32 { uid == caller ? callee : caller }
}

/// What a ``CallClient`` reports (CallAPI's listener callbacks).
public enum CallClientEvent: Sendable, Equatable {
    /// `onCallStateChanged`: the state, why, and the event behind it.
    case stateChanged(state: CallState, reason: CallStateReason, event: CallEvent, info: CallInfo?)
    /// `onCallConnected`: both sides decode each other.
    case connected(CallInfo)
    /// `onCallDisconnected`: a connected call ended; `duration` since it connected.
    case disconnected(CallInfo, hangupUid: UInt32, duration: Duration)
    /// `onCallError`: a request failed (the state did not change).
    case error(ShowroomError)
    /// The signaling login token expires within 30 s: ``CallClient/renewToken(_:)``.
    case tokenWillExpire
    /// The signaling session ended (logged out, timed out, replaced by another login) and could
    /// not be opened again.
    case loggedOut(ShowroomError?)
    /// Logged in to signaling at a call-signal node: after ``CallClient/login(token:)``, and again
    /// by itself when the session was lost (its node died, it timed out while the app slept).
    case loggedIn(nodeID: String)
    /// The session goes on at another call-signal node: the node that held it died (or the
    /// cluster grew) and the user's new owner took it over, calls included. Nothing to do.
    case signalingMoved(nodeID: String)
}

/// What ``CallClient/prepareForCall(_:)`` sets (CallAPI's `PrepareConfig`; the channel comes from
/// the server per call).
public struct PrepareConfig: Sendable {
    /// Calling + connecting timeout (`callTimeoutMillisecond`, default 15 s).
    public var callTimeout: Duration = .seconds(15)
    /// Sent with every call (`userExtension`).
    public var userExtension: [String: String] = [:]
    /// Connected at accept instead of at both sides' first frames (`firstFrameWaittingDisabled`).
    public var firstFrameWaitingDisabled = false
    /// Where the remote party's video goes; a decoding sink if nil.
    public var remoteVideoSink: (any RemoteVideoSink)?
    /// The live room this side hosts, whose audience sees "in a 1v1 call" while a call is on
    /// (from connecting to the end); nil: the room of ``pausesConnection``'s channel (a room's
    /// channel is its id unless set at creation), if any.
    public var liveRoomID: String?
    /// The live-room connection a host stops publishing on while in a call and resumes after
    /// (show → 1v1); nil for none.
    public var pausesConnection: ChannelConnection?

    public init(callTimeout: Duration = .seconds(15), userExtension: [String: String] = [:],
                firstFrameWaitingDisabled: Bool = false, remoteVideoSink: (any RemoteVideoSink)? = nil,
                pausesConnection: ChannelConnection? = nil, liveRoomID: String? = nil) {
        self.liveRoomID = liveRoomID
        self.callTimeout = callTimeout
        self.userExtension = userExtension
        self.firstFrameWaitingDisabled = firstFrameWaitingDisabled
        self.remoteVideoSink = remoteVideoSink
        self.pausesConnection = pausesConnection
    }

    /// The live room a call shows in: ``liveRoomID``, else the paused connection's channel.
    var liveRoom: String { liveRoomID ?? pausesConnection?.channel ?? "" }
}

/// CallAPI on a Showroom cluster: signaling login (the RTM part), then call, cancel, accept,
/// reject and hang up 1v1 calls that the cluster's call-signal nodes own. The call runs on its own
/// channel connection of `engine` (`joinChannelEx`), in a private channel the server made for it,
/// with tokens it minted for the two parties only.
///
/// ```swift
/// let calls = CallClient(uid: 2001, engine: engine, seeds: seeds)
/// try await calls.login(token: rtmToken)
/// try await calls.prepareForCall(PrepareConfig(pausesConnection: liveConnection))
/// for await event in calls.events { ... }
/// try await calls.call(remoteUserId: 1001)
/// ```
///
/// Notices arrive over a long poll to the user's call-signal node; every notice carries its call
/// id and a sequence number, and stale or repeated ones are dropped. The timeline of a call
/// (``timeline``) holds the milliseconds from the call's start to each step, like CallAPI's
/// `costTimeMap`.
public final class CallClient: Sendable {
    /// What happens, in order.
    public let events: AsyncStream<CallClientEvent>
    /// The local uid.
    public let uid: UInt32
    /// The engine the call's channel connection runs on.
    public let engine: ShowroomEngine

    private let client: MemberClient
    private let pollClient: MemberClient
    private let sink: AsyncStream<CallClientEvent>.Continuation
    private let state = Mutex(LocalState())
    private let pollWait: Duration

    private struct LocalState: ~Copyable {
        var sessionID = ""
        /// The node holding the session, as the last answer named it.
        var nodeID = ""
        var loginToken = ""
        var config = PrepareConfig()
        var callState: CallState = .idle
        var call: CallInfo?
        var token = ""
        var connection: ChannelConnection?
        var filter = CallNoticeFilter()
        var firstFrameSent = false
        /// A look-up of the call in progress went unanswered: the poll loop asks again.
        var resynchronizeAgain = false
        var paused = false
        var timeline: [String: Duration] = [:]
        var startedAt: ContinuousClock.Instant?
        var polling: Task<Void, Never>?
        var watching: Task<Void, Never>?
        /// What the poll loop received, handled in order by ``handling`` while the next poll is
        /// already out: a notice waiting behind a slow step (a join) is there when the step ends.
        var inbox: AsyncStream<@Sendable () async -> Void>.Continuation?
        var handling: Task<Void, Never>?
    }

    /// A client for `uid`, on `engine`, finding the call-signal nodes through `seeds` (any members'
    /// client or cluster endpoints).
    public init(uid: UInt32, engine: ShowroomEngine, seeds: [String], timeout: Duration = .seconds(3),
                pollWait: Duration = .seconds(10)) {
        self.uid = uid
        self.engine = engine
        self.pollWait = pollWait
        let directory = ClusterDirectory(seeds: seeds, loop: engine.loop, timeout: timeout, cacheDuration: .seconds(2))
        client = MemberClient(directory: directory, role: .callsignal, timeout: timeout)
        pollClient = MemberClient(directory: directory, role: .callsignal, timeout: pollWait + timeout)
        (events, sink) = AsyncStream<CallClientEvent>.makeStream(bufferingPolicy: .bufferingNewest(1_000))
    }

    /// The local side's state.
    public var callState: CallState { state.withLock { $0.callState } }
    /// The current (or last) call.
    public var currentCall: CallInfo? { state.withLock { $0.call } }
    /// Milliseconds from the current call's start to each step: `remoteUserRecvCall`,
    /// `acceptCall`, `localUserJoinChannel`, `remoteUserJoinChannel`, `localFirstFrameDidPublish`,
    /// `recvFirstFrame` (the remote's first frame decoded), `connected`.
    public var timeline: [String: Duration] { state.withLock { $0.timeline } }

    private var key: String { "uid/\(uid)" }

    // MARK: - Signaling

    /// Logs in to signaling with an RTM token and starts receiving notices.
    public func login(token: String) async throws(ShowroomError) {
        let answer = try await openSession(token: token)
        // The session first: the loops read it as they start.
        state.withLock {
            $0.sessionID = answer.sessionID
            $0.nodeID = answer.nodeID
            $0.loginToken = token
            $0.polling?.cancel()
            $0.watching?.cancel()
            $0.handling?.cancel()
            $0.inbox?.finish()
            if $0.callState == .idle { $0.callState = .prepared }
        }
        let watching = Task { [weak self] in
            guard let self else { return }
            await self.watchEngine()
        }
        let (work, inbox) = AsyncStream<@Sendable () async -> Void>.makeStream()
        let handling = Task {
            for await step in work { await step() }
        }
        let polling = Task { [weak self] in
            guard let self else { return }
            await self.pollLoop()
        }
        state.withLock {
            $0.polling = polling
            $0.watching = watching
            $0.handling = handling
            $0.inbox = inbox
        }
    }

    private func openSession(token: String) async throws(ShowroomError) -> SignalLoginResponse {
        var request = SignalLoginRequest()
        request.uid = uid
        request.token = token
        let answer = try await client.request(.callLogin, body: request, key: key, expecting: SignalLoginResponse.self)
        sink.yield(.loggedIn(nodeID: answer.nodeID))
        return answer
    }

    /// The session was lost: log in again with the same token (a few tries, the cluster may still
    /// be settling on the user's new owner). Returns whether it worked.
    private func reopenSession() async -> Bool {
        let token = state.withLock { $0.loginToken }
        guard !token.isEmpty else { return false }
        for attempt in 0..<5 {
            if Task.isCancelled { return false }
            if let answer = try? await openSession(token: token) {
                state.withLock {
                    $0.sessionID = answer.sessionID
                    $0.nodeID = answer.nodeID
                }
                return true
            }
            try? await Task.sleep(for: .milliseconds(200 * (attempt + 1)))
        }
        return false
    }

    /// The session was lost and opened again: a call it was in is gone with it (its node forgot
    /// the session), so the call fails here too rather than staying stuck.
    private func callLostWithSession() async {
        let lost = state.withLock { state -> (CallInfo, CallState)? in
            guard let call = state.call, [.calling, .connecting, .connected].contains(state.callState) else { return nil }
            let before = state.callState
            state.callState = .failed
            return (call, before)
        }
        guard let (call, before) = lost else { return }
        sink.yield(.stateChanged(state: .failed, reason: .messageFailed, event: .none, info: call))
        await leaveCall(call, wasConnected: before == .connected)
    }

    /// Logs out; a call in progress is hung up first.
    public func logout() async {
        if let call = currentCall, callState != .prepared, callState != .idle {
            try? await hangup(remoteUserId: call.remote(of: uid), reason: "logged out")
        }
        let sessionID = state.withLock { state -> String in
            state.polling?.cancel()
            state.watching?.cancel()
            state.inbox?.finish()
            state.polling = nil
            state.watching = nil
            state.inbox = nil
            state.handling = nil
            state.loginToken = ""
            defer { state.sessionID = "" }
            return state.sessionID
        }
        guard !sessionID.isEmpty else { return }
        _ = try? await client.request(.callLogout, body: SignalLogoutRequest.with { $0.sessionID = sessionID }, key: key,
                                      expecting: SignalLogoutResponse.self)
        sink.yield(.loggedOut(nil))
    }

    /// Renews the signaling login token.
    public func renewToken(_ token: String) async throws(ShowroomError) {
        var request = SignalRenewTokenRequest()
        request.sessionID = state.withLock { $0.sessionID }
        request.token = token
        _ = try await client.request(.callRenewToken, body: request, key: key, expecting: SignalRenewTokenResponse.self)
        state.withLock { $0.loginToken = token }
    }

    /// Who of `uids` is online, in a call or offline.
    public func presence(of uids: [UInt32]) async throws(ShowroomError) -> [UInt32: PresenceState] {
        let answer = try await client.request(.callPresence, body: SignalPresenceRequest.with { $0.uids = uids }, key: key,
                                              expecting: SignalPresenceResponse.self)
        var states: [UInt32: PresenceState] = [:]
        for entry in answer.entries {
            states[entry.uid] = switch entry.state {
            case .online: .online
            case .inCall: .inCall
            default: .offline
            }
        }
        return states
    }

    // MARK: - CallAPI

    /// Sets what the next calls use; the state becomes prepared, and the engine's camera gets
    /// ready (``ShowroomEngine/startPreview()``). Refused mid-call (CallAPI sets failed then; here
    /// nothing changes).
    public func prepareForCall(_ config: PrepareConfig) async throws(ShowroomError) {
        try state.withLock { (state) throws(ShowroomError) in
            guard [.idle, .prepared, .failed].contains(state.callState) else {
                throw ShowroomError(.callStateMismatch, "prepareForCall during a call (\(state.callState)); hang up first")
            }
            state.config = config
            state.callState = .prepared
        }
        // As CallAPI's prepare sets up the local view: the camera's encoder is made now, not on
        // the call's first frame (making one takes milliseconds of CPU, on the set-up's path).
        await engine.startPreview()
    }

    /// Calls `remoteUserId` (CallAPI's `call`). The answer comes as state changes: calling, then
    /// connecting and connected, or prepared with the reason (busy 17, rejected 6, timeout 14 …).
    public func call(remoteUserId: UInt32, callType: CallType = .video, callExtension: [String: String] = [:]) async throws(ShowroomError) {
        let (sessionID, config) = state.withLock { ($0.sessionID, $0.config) }
        var request = SignalDialRequest()
        request.sessionID = sessionID
        request.callee = remoteUserId
        request.type = callType == .audio ? .audio : .video
        request.extension = config.userExtension.merging(callExtension) { $1 }
        request.timeoutMs = UInt32(clamping: config.callTimeout.milliseconds)
        request.firstFrameWaitingDisabled = config.firstFrameWaitingDisabled
        request.liveRoomID = config.liveRoom
        state.withLock {
            $0.startedAt = .now
            $0.timeline = [:]
            $0.firstFrameSent = false
        }
        let answer: SignalDialResponse
        do throws(ShowroomError) {
            answer = try await client.request(.callDial, body: request, key: key, expecting: SignalDialResponse.self)
        } catch {
            sink.yield(.error(error))
            throw error
        }
        // The answer names the call's channel and this side's token: the caller joins now, a
        // poll's round trip before the calling notice would say the same.
        let call = answer.call
        if call.endReason.isEmpty, !call.channel.isEmpty, !call.token.isEmpty, call.caller == uid {
            enqueue { await $0.dialAnswered(call) }
        }
    }

    /// The caller's join at the dial's answer, in order with the notices: nothing if a notice of
    /// the call came first (it joined, or the call is over already).
    private func dialAnswered(_ call: SignalCallInfo) async {
        let info = CallInfo(call)
        let (fresh, config) = state.withLock { state -> (Bool, PrepareConfig) in
            guard state.call?.callID != call.callID, ![.calling, .connecting, .connected].contains(state.callState) else {
                return (false, state.config)
            }
            state.call = info
            state.token = call.token
            return (true, state.config)
        }
        if fresh { await joinCall(info, publish: true, config: config) }
    }

    /// Cancels the call this side made while it rings.
    public func cancelCall() async throws(ShowroomError) { try await act(.callCancel) }

    /// Accepts the call from `remoteUserId`.
    public func accept(remoteUserId: UInt32) async throws(ShowroomError) {
        mark("acceptCall")
        try await act(.callAccept, liveRoom: state.withLock { $0.config.liveRoom })
    }

    /// Rejects the call from `remoteUserId`, saying why.
    public func reject(remoteUserId: UInt32, reason: String = "") async throws(ShowroomError) {
        try await act(.callReject, reason: reason)
    }

    /// Hangs up the call with `remoteUserId`, saying why.
    public func hangup(remoteUserId: UInt32, reason: String = "") async throws(ShowroomError) {
        try await act(.callHangup, reason: reason)
    }

    private func act(_ kind: WireMessageKind, reason: String = "", liveRoom: String = "") async throws(ShowroomError) {
        let (sessionID, callID) = state.withLock { ($0.sessionID, $0.call?.callID ?? "") }
        guard !callID.isEmpty else { throw ShowroomError(.unknownCall, "there is no call to \(kind)") }
        var request = SignalCallActionRequest()
        request.sessionID = sessionID
        request.callID = callID
        request.reason = reason
        request.liveRoomID = liveRoom
        do throws(ShowroomError) {
            _ = try await client.request(kind, body: request, key: key, expecting: SignalCallActionResponse.self)
        } catch {
            sink.yield(.error(error))
            // The server no longer holds the call (or says it is over): it is over here too, as
            // when polls find it gone, or the app would stay in a call nobody else is in.
            if Self.callGone.contains(error.code), state.withLock({ $0.call?.callID == callID }) {
                enqueue { await $0.callLostWithSession() }
            }
            throw error
        }
    }

    /// The answers that say the server holds no call by that id that goes on.
    static let callGone: Set<ShowroomError.Code> = [.unknownCall, .callEnded]

    // MARK: - Notices

    private func pollLoop() async {
        // Set after a poll failed: notices queued at a node that died may be lost, so the call
        // in progress is looked up once polls work again.
        var interrupted = false
        while !Task.isCancelled {
            let sessionID = state.withLock { $0.sessionID }
            guard !sessionID.isEmpty else { return }
            var request = SignalPollRequest()
            request.sessionID = sessionID
            request.maxWaitMs = UInt32(clamping: pollWait.milliseconds)
            do throws(ShowroomError) {
                let answer = try await pollClient.request(.callPoll, body: request, key: key, expecting: SignalPollResponse.self)
                let moved = state.withLock { state -> Bool in
                    guard !answer.nodeID.isEmpty, answer.nodeID != state.nodeID else { return false }
                    state.nodeID = answer.nodeID
                    return true
                }
                if moved { sink.yield(.signalingMoved(nodeID: answer.nodeID)) }
                if answer.tokenWillExpire { sink.yield(.tokenWillExpire) }
                for notice in answer.notices { enqueue { await $0.handle(notice) } }
                // A new owner knows the user from its record, not the notices the old one
                // delivered (a call rung there during a partition may be held by nobody now).
                let again = state.withLock { state -> Bool in
                    defer { state.resynchronizeAgain = false }
                    return state.resynchronizeAgain
                }
                if interrupted || moved || again {
                    interrupted = false
                    enqueue { await $0.resynchronizeCall() }
                }
            } catch {
                if Task.isCancelled { return }
                if error.code == .notLoggedIn {
                    if await reopenSession() {
                        enqueue { await $0.callLostWithSession() }
                        continue
                    }
                    state.withLock { $0.sessionID = "" }
                    sink.yield(.loggedOut(error))
                    return
                }
                interrupted = true
                // The node may be gone: the next poll goes to the user's new owner.
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Hands a step to the notice handler, after the steps before it.
    private func enqueue(_ step: @escaping @Sendable (CallClient) async -> Void) {
        _ = state.withLock { $0.inbox }?.yield { [weak self] in
            if let self { await step(self) }
        }
    }

    /// After polls were interrupted, or answered by the user's new owner: asks the call's owner
    /// about the call in progress. One it no longer holds (it ended while its notices were lost
    /// with a node, or it was dropped while the user moved between owners) fails here too.
    private func resynchronizeCall() async {
        let (sessionID, callID, active) = state.withLock {
            ($0.sessionID, $0.call?.callID ?? "", [.calling, .connecting, .connected].contains($0.callState))
        }
        guard active, !callID.isEmpty else { return }
        var request = SignalCallActionRequest()
        request.sessionID = sessionID
        request.callID = callID
        do throws(ShowroomError) {
            let answer = try await client.request(.callToken, body: request, key: key, expecting: SignalCallActionResponse.self)
            if !answer.call.token.isEmpty { state.withLock { $0.token = answer.call.token } }
        } catch {
            guard [.unknownCall, .callEnded, .notYourCall].contains(error.code) else {
                // No answer (the node asked died, the owner is moving): asked again after the next poll.
                if [.unavailable, .deadlineExceeded].contains(error.code) { state.withLock { $0.resynchronizeAgain = true } }
                return
            }
            guard state.withLock({ $0.call?.callID == callID }) else { return }
            await callLostWithSession()
        }
    }

    private func handle(_ notice: SignalNotice) async {
        let info = CallInfo(notice.call)
        let newState = CallState(rawValue: Int(notice.state)) ?? .failed
        let reason = CallStateReason(rawValue: Int(notice.reason)) ?? .none
        let event = CallEvent(rawValue: Int(notice.event)) ?? .none
        let accepted = state.withLock { (state) -> (before: CallState, config: PrepareConfig, connection: ChannelConnection?)? in
            guard state.filter.take(callID: notice.callID, sequence: notice.sequence, ends: newState.endsCall) else { return nil }
            // A notice of an older call than the current one is history.
            if let current = state.call, current.callID != notice.callID, newState != .calling { return nil }
            if state.call?.callID != notice.callID {
                // A new call: its own first frame to report, and (called) its own timeline.
                state.firstFrameSent = false
                if info.callee == uid {
                    state.timeline = [:]
                    state.startedAt = .now
                }
            }
            let before = state.callState
            state.callState = newState
            state.call = info
            if !notice.call.token.isEmpty { state.token = notice.call.token }
            if state.startedAt == nil { state.startedAt = .now }
            return (before, state.config, state.connection)
        }
        guard let accepted else { return }
        if event == .remoteUserRecvCall { mark("remoteUserRecvCall") }
        sink.yield(.stateChanged(state: newState, reason: reason, event: event, info: info))
        // An event without a change of state (remoteJoined, remoteLeft …) starts nothing again.
        guard newState != accepted.before else { return }
        switch newState {
        case .calling:
            await joinCall(info, publish: info.caller == uid, config: accepted.config)
        case .connecting:
            if info.callee == uid { try? await engine.updateChannelEx(options: ChannelMediaOptions(publishAudio: true, publishVideo: info.type == .video), connection: accepted.connection) }
            await pauseLive(true, config: accepted.config)
        case .connected:
            mark("connected")
            sink.yield(.connected(info))
        case .prepared, .failed, .idle:
            await leaveCall(info, wasConnected: accepted.before == .connected)
        }
    }

    private func joinCall(_ info: CallInfo, publish: Bool, config: PrepareConfig) async {
        let token = state.withLock { $0.token }
        guard !info.channel.isEmpty, state.withLock({ $0.connection == nil }) else { return }
        let connection = ChannelConnection(channel: info.channel, uid: uid)
        let remote = info.remote(of: uid)
        try? await engine.setupRemoteVideo(uid: remote, connection: connection, sink: config.remoteVideoSink ?? DecodingVideoSink())
        var options = ChannelMediaOptions.broadcaster
        options.publishAudio = publish
        options.publishVideo = publish && info.type == .video
        do throws(ShowroomError) {
            // The call's channel is new: placed where this engine already is (a caller watching the
            // host's room shares its edge with the host), neither party opens a new session.
            let joined = try await engine.join(token: token, connection: connection, options: options, primary: false,
                                               preferringWarmEdges: true)
            state.withLock { $0.connection = joined }
            mark("localUserJoinChannel")
        } catch {
            // Banned: the call ended while the join was on its way and its channel was sealed;
            // the notice that says so follows.
            if error.code != .banned { sink.yield(.error(error)) }
        }
    }

    private func leaveCall(_ info: CallInfo, wasConnected: Bool) async {
        let (connection, config, started) = state.withLock { state in
            defer {
                state.connection = nil
                state.token = ""
            }
            return (state.connection, state.config, state.startedAt)
        }
        if let connection { try? await engine.leaveChannelEx(connection) }
        await pauseLive(false, config: config)
        if wasConnected {
            let duration = info.connectedAtMs > 0 && info.endedAtMs >= info.connectedAtMs
                ? Duration.milliseconds(info.endedAtMs - info.connectedAtMs) : (started.map { ContinuousClock.now - $0 } ?? .zero)
            sink.yield(.disconnected(info, hangupUid: info.endedBy, duration: duration))
        }
    }

    /// A host stops publishing on its live connection while in a call, and resumes after.
    private func pauseLive(_ pause: Bool, config: PrepareConfig) async {
        guard let live = config.pausesConnection else { return }
        let change = state.withLock { state -> Bool in
            guard state.paused != pause else { return false }
            state.paused = pause
            return true
        }
        guard change else { return }
        try? await engine.updateChannelEx(options: ChannelMediaOptions(publishAudio: !pause, publishVideo: !pause), connection: live)
    }

    /// Reports the first remote frame of the call's connection to the server, once per call.
    private func watchEngine() async {
        for await event in engine.events(bufferingNewest: 1_000) {
            if Task.isCancelled { return }
            if case .tokenWillExpire(let connection, _) = event {
                await renewCallToken(connection)
                continue
            }
            markCallStep(of: event)
            let first: (connection: ChannelConnection, uid: UInt32)?
            switch event {
            case .firstRemoteVideoFrameDecoded(let connection, let uid, _, _, _): first = (connection, uid)
            case .remoteTrackPublished(let connection, let uid, .audio):
                first = state.withLock { $0.call?.type == .audio } ? (connection, uid) : nil
            default: first = nil
            }
            guard let first else { continue }
            let send = state.withLock { state -> (String, String)? in
                // The call's channel, not the connection: the first frames (the edge's cached GOP)
                // may be decoded before the join's answer is back.
                guard let call = state.call, call.channel == first.connection.channel,
                      first.uid == call.remote(of: uid), !state.firstFrameSent else { return nil }
                state.firstFrameSent = true
                return (state.sessionID, call.callID)
            }
            guard let (sessionID, callID) = send else { continue }
            mark("recvFirstFrame")
            var request = SignalCallActionRequest()
            request.sessionID = sessionID
            request.callID = callID
            _ = try? await client.request(.callFirstFrame, body: request, key: key, expecting: SignalCallActionResponse.self)
        }
    }

    /// Call tokens last two minutes: when the edge says the call connection's will expire, a fresh
    /// one comes from the call-signal node while the call goes on.
    private func renewCallToken(_ connection: ChannelConnection) async {
        let ask = state.withLock { state -> (String, String)? in
            guard let call = state.call, call.channel == connection.channel else { return nil }
            return (state.sessionID, call.callID)
        }
        guard let (sessionID, callID) = ask else { return }
        var request = SignalCallActionRequest()
        request.sessionID = sessionID
        request.callID = callID
        do throws(ShowroomError) {
            let answer = try await client.request(.callToken, body: request, key: key, expecting: SignalCallActionResponse.self)
            state.withLock { $0.token = answer.call.token }
            try await engine.renewToken(answer.call.token, connection: connection)
        } catch {
            if error.code != .callEnded { sink.yield(.error(error)) }
        }
    }

    /// The timeline's engine steps: the remote party in the call's channel, the first local frame
    /// of the call's kind sent.
    private func markCallStep(of event: EngineEvent) {
        let step: String?
        switch event {
        case .userJoined(let connection, let remote):
            step = state.withLock { $0.call.map { $0.channel == connection.channel && $0.remote(of: uid) == remote } ?? false }
                ? "remoteUserJoinChannel" : nil
        case .firstLocalFramePublished(let connection, let track, _):
            step = state.withLock { $0.call.map { $0.channel == connection.channel && (track == .video) == ($0.type == .video) } ?? false }
                ? "localFirstFrameDidPublish" : nil
        default:
            step = nil
        }
        if let step { mark(step) }
    }

    private func mark(_ step: String) {
        state.withLock { state in
            guard let started = state.startedAt, state.timeline[step] == nil else { return }
            state.timeline[step] = ContinuousClock.now - started
        }
    }

    /// Stops polling and watching; the session stays until it times out (use ``logout()``).
    public func close() async {
        state.withLock {
            $0.polling?.cancel()
            $0.watching?.cancel()
            $0.handling?.cancel()
            $0.inbox?.finish()
        }
        sink.finish()
        await client.close()
        await pollClient.close()
    }
}

/// Whether a user is logged in to signaling, and in a call.
public enum PresenceState: Sendable, Equatable {
    case offline, online, inCall
}

extension CallInfo {
    init(_ info: SignalCallInfo) {
        self.init(callID: info.callID, caller: info.caller, callee: info.callee, type: info.type == .audio ? .audio : .video,
                  channel: info.channel, extensionInfo: info.extension, endReason: info.endReason, endedBy: info.endedBy,
                  endMessage: info.endMessage, startedAtMs: info.startedAtMs, acceptedAtMs: info.acceptedAtMs,
                  connectedAtMs: info.connectedAtMs, endedAtMs: info.endedAtMs)
    }
}
