import Calls
import Logging
import NodeRuntime
import Routing
import ShowroomAuth
import ShowroomTesting
import ShowroomWire
import XCTest
@testable import CallSignal

/// Call-signal nodes on an in-process network with a clock moved by hand, and clients that speak
/// to them as the SDK will: login, polls, dial, accept, first frames, hang-up.
final class CallSignalHarness {
    let network = InProcessNetwork()
    private(set) var shells: [String: CallSignalShell] = [:]
    /// The signed kicks the fake coordinator was sent (channel, uid), in order.
    private(set) var kicks: [(channel: String, uid: UInt32)] = []
    /// The live rooms' call statuses the fake coordinator took ("room uid kind id"), in order.
    private(set) var roomStatuses: [String] = []

    init(nodes ids: [String]) {
        for id in ids { start(id) }
        // A coordinator that takes signed kicks, as a real one does.
        let coordinator = network.add("coordinator-1", role: .coordinator)
        coordinator.serve(.kick) { [unowned self] request, respond in
            do {
                let body = try request.decodeBody(RoomKickRequest.self)
                try AdminSigner.verify(body.admin, action: "kick", target: body.channel, uid: body.uid,
                                       nowMs: network.now, appCertificate: TestApp.certificate)
                kicks.append((body.channel, body.uid))
                respond(.success(RoomKickResponse()))
            } catch let error as ShowroomError {
                respond(.failure(error))
            } catch {
                respond(.failure(.internal("\(error)")))
            }
        }
        coordinator.serve(.roomInteraction) { [unowned self] request, respond in
            guard let body = try? request.decodeBody(RoomSetInteractionRequest.self) else {
                return respond(.failure(.malformed("not a SetInteractionRequest")))
            }
            roomStatuses.append("\(body.roomID) \(body.ownerUid) \(body.kind == .call ? "call" : "idle") \(body.id)")
            respond(.success(RoomSetInteractionResponse()))
        }
        network.membershipChanged()
    }

    /// Starts a call-signal node `id` (call ``InProcessNetwork/membershipChanged()`` to tell the
    /// others).
    func start(_ id: String) {
        let node = network.add(id, role: .callsignal)
        var configuration = NodeConfiguration(role: .callsignal, nodeID: id)
        configuration.appID = TestApp.appID
        configuration.appCertificate = TestApp.certificate
        let shell = CallSignalShell(node: node, configuration: configuration, logger: LogCapture.logger(label: id))
        shell.install()
        shells[id] = shell
    }

    /// The alive node owning `uid`.
    func owner(of uid: UInt32) -> String {
        OwnerRing(.callsignal, memberIDs: shells.keys.filter { network.isAlive($0) }).owner(of: "uid/\(uid)")!
    }

    /// Lets the nodes send their changed records to the successors (one flush).
    func flush() { network.advance(by: CallSignalShell.flushInterval) }

    /// Two uids from `start` on with different owners.
    func uidsWithDifferentOwners(from start: UInt32 = 1000) -> (UInt32, UInt32) {
        var other = start + 1
        while owner(of: other) == owner(of: start) { other += 1 }
        return (start, other)
    }

    func node(_ id: String) -> InProcessNetwork.Node { network.nodes[id]! }

    /// A viewer and a host with different owners, from uid `start` on, logged in through the
    /// nodes given (nil: each through its owner).
    func loggedInPair(from start: UInt32, viewerVia: String?, hostVia: String?) throws -> (SignalClient, SignalClient) {
        let (v, h) = uidsWithDifferentOwners(from: start)
        let viewer = SignalClient(v, via: node(viewerVia ?? owner(of: v)))
        let host = SignalClient(h, via: node(hostVia ?? owner(of: h)))
        try viewer.login()
        try host.login()
        return (viewer, host)
    }
}

/// A signaling client: a session on any node, its notices, its requests.
final class SignalClient {
    let uid: UInt32
    /// The node the client talks to (any node: requests reach the user's owner).
    var via: InProcessNetwork.Node
    var sessionID = ""
    var notices: [SignalNotice] = []
    var filter = CallNoticeFilter()

    init(_ uid: UInt32, via node: InProcessNetwork.Node) {
        self.uid = uid
        self.via = node
    }

    func login(token: String? = nil) throws {
        let token = try token ?? TestApp.loginToken(uid: uid)
        sessionID = try via.ask(.callLogin, SignalLoginRequest.with {
            $0.uid = uid
            $0.token = token
        }, as: SignalLoginResponse.self).sessionID
    }

    /// Takes the notices waiting (fresh ones only, as a client would).
    @discardableResult
    func poll() throws -> [SignalNotice] {
        let answer = try via.ask(.callPoll, SignalPollRequest.with { $0.sessionID = sessionID }, as: SignalPollResponse.self)
        let fresh = answer.notices.filter { filter.take(callID: $0.callID, sequence: $0.sequence) }
        notices += fresh
        return fresh
    }

    func dial(_ callee: UInt32, timeoutMs: UInt32 = 0, waitFirstFrame: Bool = true) throws -> SignalCallInfo {
        try via.ask(.callDial, SignalDialRequest.with {
            $0.sessionID = sessionID
            $0.callee = callee
            $0.timeoutMs = timeoutMs
            $0.firstFrameWaitingDisabled = !waitFirstFrame
            $0.extension = ["gift": "rose"]
        }, as: SignalDialResponse.self).call
    }

    @discardableResult
    func act(_ kind: WireMessageKind, _ callID: String, reason: String = "") throws -> SignalCallInfo {
        try via.ask(kind, SignalCallActionRequest.with {
            $0.sessionID = sessionID
            $0.callID = callID
            $0.reason = reason
        }, as: SignalCallActionResponse.self).call
    }

    /// The (state, reason, event) of the notices taken so far.
    var told: [String] { notices.map { "\($0.state) \($0.reason) \($0.event)" } }
}

final class CallSignalShellTests: XCTestCase {
    let ids = ["signal-a", "signal-b", "signal-c"]

    func presence(_ uids: [UInt32], at node: InProcessNetwork.Node) throws -> [SignalPresenceState] {
        try node.ask(.callPresence, SignalPresenceRequest.with { $0.uids = uids }, as: SignalPresenceResponse.self)
            .entries.map(\.state)
    }

    func testLoginLogoutAndPresenceFromAnyNode() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (a, b) = cluster.uidsWithDifferentOwners()
        let alice = SignalClient(a, via: cluster.node("signal-a"))
        let bob = SignalClient(b, via: cluster.node("signal-c"))
        try alice.login()
        try bob.login()
        XCTAssertTrue(cluster.shells[cluster.owner(of: a)]!.presence.isOnline(a), "the session lives at the owner")
        XCTAssertEqual(try presence([a, b, 4242], at: cluster.node("signal-b")), [.online, .online, .offline])
        _ = try alice.via.ask(.callLogout, SignalLogoutRequest.with { $0.sessionID = alice.sessionID }, as: SignalLogoutResponse.self)
        XCTAssertEqual(try presence([a], at: cluster.node("signal-c")), [.offline])
        XCTAssertThrowsError(try alice.poll()) { error in XCTAssertEqual((error as? ShowroomError)?.code, .notLoggedIn) }
    }

    func testBadLoginsAndForgedSessionsAreRefused() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let eve = SignalClient(66, via: cluster.node("signal-b"))
        let forAnother = try TestApp.loginToken(uid: 66, userID: "67")
        XCTAssertThrowsError(try eve.login(token: forAnother)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .tokenUidMismatch)
        }
        let rtc = try TestApp.token(channel: "", uid: 66)
        XCTAssertThrowsError(try eve.login(token: rtc)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .tokenMissingPrivilege)
        }
        // A victim's uid with a made-up secret, and garbage.
        let victim = SignalClient(67, via: cluster.node("signal-a"))
        try victim.login()
        for forged in ["67-00000000000000000000000000000000", "not-a-session", String(repeating: "9", count: 5000)] {
            eve.sessionID = forged
            XCTAssertThrowsError(try eve.dial(67)) { error in XCTAssertEqual((error as? ShowroomError)?.code, .notLoggedIn) }
        }
        var garbage = try WireEnvelope(request: .callDial, id: 1, body: SignalLogoutRequest())
        garbage.body = Data([0xFF, 0x01])
        XCTAssertEqual(try cluster.node("signal-c").request(garbage).failure?.code, .malformedMessage)
        XCTAssertEqual(try presence([67], at: cluster.node("signal-b")), [.online], "the victim is untouched")
    }

    func testACallAcrossNodesFromRingToHangUp() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 2001, viewerVia: "signal-a", hostVia: "signal-b")
        let (v, h) = (viewer.uid, host.uid)

        let call = try viewer.dial(h)
        XCTAssertTrue(call.callID.hasPrefix("\(h)-"))
        XCTAssertTrue(call.channel.hasPrefix("call-"))
        XCTAssertEqual(call.extension, ["gift": "rose"])
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(viewer.told, ["2 0 99"], "caller: calling, remoteUserRecvCall")
        XCTAssertEqual(host.told, ["2 0 0"], "callee: calling")
        XCTAssertEqual(host.notices[0].call.caller, v)
        XCTAssertEqual(try presence([v, h], at: cluster.node("signal-c")), [.inCall, .inCall])

        // Each side's token opens the call's channel for that side only.
        let verifier = TokenVerifier(appID: TestApp.appID, appCertificate: TestApp.certificate)
        let now = UInt32(cluster.network.now / 1000)
        XCTAssertNoThrow(try verifier.verify(host.notices[0].call.token, channel: call.channel, uid: h, now: now))
        XCTAssertThrowsError(try verifier.verify(host.notices[0].call.token, channel: call.channel, uid: v, now: now))
        XCTAssertThrowsError(try verifier.verify(host.notices[0].call.token, channel: "another", uid: h, now: now))

        try host.act(.callAccept, call.callID)
        try viewer.act(.callFirstFrame, call.callID)
        try host.act(.callFirstFrame, call.callID)
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(viewer.told, ["2 0 99", "3 7 103", "4 13 113"])
        XCTAssertEqual(host.told, ["2 0 0", "3 8 104", "4 13 113"])

        try host.act(.callHangup, call.callID, reason: "bye")
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(host.told.last, "1 9 105")
        XCTAssertEqual(viewer.told.last, "1 10 106")
        XCTAssertEqual(viewer.notices.last?.call.endMessage, "bye")
        XCTAssertEqual(viewer.notices.last?.call.channel, "", "no channel once ended")
        XCTAssertEqual(Set(cluster.kicks.map(\.uid)), [v, h], "the channel is sealed for both")
        XCTAssertEqual(Set(cluster.kicks.map(\.channel)), [call.channel])
        XCTAssertEqual(try presence([v, h], at: cluster.node("signal-a")), [.online, .online])
        // Sequences grew across each side's notices.
        XCTAssertEqual(viewer.notices.map(\.sequence), viewer.notices.map(\.sequence).sorted())
    }

    func testCallTokensAreShortAndRenewedOnlyForThePartiesOfACallThatGoesOn() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (v, h) = cluster.uidsWithDifferentOwners(from: 7001)
        let viewer = SignalClient(v, via: cluster.node("signal-a"))
        let host = SignalClient(h, via: cluster.node("signal-b"))
        let stranger = SignalClient(7999, via: cluster.node("signal-c"))
        for client in [viewer, host, stranger] { try client.login() }
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        let verifier = TokenVerifier(appID: TestApp.appID, appCertificate: TestApp.certificate)
        let issued = UInt32(cluster.network.now / 1000)
        XCTAssertEqual(try verifier.verify(call.token, channel: call.channel, uid: v, now: issued).tokenExpiresAt, issued + 120)
        // A minute and a half on, a fresh one lasts two minutes from then.
        for _ in 0..<18 {
            cluster.network.advance(by: .seconds(5))
            try viewer.poll()
            try host.poll()
            try stranger.poll()
        }
        let renewed = try viewer.act(.callToken, call.callID)
        let now = UInt32(cluster.network.now / 1000)
        XCTAssertEqual(try verifier.verify(renewed.token, channel: call.channel, uid: v, now: now).tokenExpiresAt, now + 120)
        XCTAssertThrowsError(try stranger.act(.callToken, call.callID)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .notYourCall)
        }
        try host.act(.callHangup, call.callID)
        XCTAssertThrowsError(try viewer.act(.callToken, call.callID)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .callEnded)
        }
    }

    func testAPartysTokenIsMintedOnceAndAgainOnlyWhenAQuarterOfItsLifeIsGone() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (v, h) = cluster.uidsWithDifferentOwners(from: 7101)
        let viewer = SignalClient(v, via: cluster.node("signal-a"))
        let host = SignalClient(h, via: cluster.node("signal-b"))
        for client in [viewer, host] { try client.login() }
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.poll()
        try host.act(.callAccept, call.callID)
        try viewer.poll()
        try host.poll()
        // The dial's answer and every notice so far carry the same token for each side.
        let viewerTokens = Set([call.token] + viewer.notices.map(\.call.token))
        let hostTokens = Set(host.notices.map(\.call.token))
        XCTAssertEqual(viewerTokens.count, 1, "one token for the caller: \(viewerTokens)")
        XCTAssertEqual(hostTokens.count, 1, "one token for the callee")
        XCTAssertNotEqual(viewerTokens, hostTokens)
        // Past a quarter of its two minutes, the next one is minted anew, lasting two minutes from then.
        for _ in 0..<7 {
            cluster.network.advance(by: .seconds(5))
            try viewer.poll()
            try host.poll()
        }
        let renewed = try viewer.act(.callToken, call.callID)
        XCTAssertFalse(viewerTokens.contains(renewed.token))
        let verifier = TokenVerifier(appID: TestApp.appID, appCertificate: TestApp.certificate)
        let now = UInt32(cluster.network.now / 1000)
        XCTAssertEqual(try verifier.verify(renewed.token, channel: call.channel, uid: v, now: now).tokenExpiresAt, now + 120)
        // An ended call's notices carry no token; the next call's token opens its own channel only.
        try host.act(.callHangup, call.callID)
        try viewer.poll()
        XCTAssertEqual(viewer.notices.last?.call.token, "")
        let next = try viewer.dial(h)
        XCTAssertNoThrow(try verifier.verify(next.token, channel: next.channel, uid: v, now: now))
        XCTAssertThrowsError(try verifier.verify(next.token, channel: call.channel, uid: v, now: now))
    }

    func testBusyOfflineAndACallerAlreadyInACall() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let host = SignalClient(5000, via: cluster.node("signal-a"))
        let first = SignalClient(5001, via: cluster.node("signal-b"))
        let second = SignalClient(5002, via: cluster.node("signal-c"))
        for client in [host, first, second] { try client.login() }
        let ringing = try first.dial(5000)
        let busy = try second.dial(5000)
        XCTAssertEqual(busy.endReason, "busy")
        try second.poll()
        XCTAssertEqual(second.told, ["1 17 117"], "prepared, remoteCallBusy")
        try host.poll()
        XCTAssertEqual(host.notices.map(\.callID), [ringing.callID], "only one call rang")
        XCTAssertEqual(try presence([5002], at: cluster.node("signal-a")), [.online], "the busy caller is free again")
        XCTAssertTrue(cluster.kicks.isEmpty, "a busy call never had a channel to seal")

        XCTAssertThrowsError(try second.dial(7777)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .calleeOffline)
        }
        XCTAssertThrowsError(try first.dial(5002)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .callerInCall)
        }
        XCTAssertThrowsError(try second.act(.callAccept, ringing.callID)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .notYourCall)
        }
        XCTAssertThrowsError(try first.act(.callAccept, ringing.callID)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .notYourCall, "a caller cannot accept its own call")
        }
    }

    func testACallerDiallingInALoopIsSlowedDownAndNobodyElseIs() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let host = SignalClient(9000, via: cluster.node("signal-a"))
        let spammer = SignalClient(9001, via: cluster.node("signal-b"))
        let fan = SignalClient(9002, via: cluster.node("signal-c"))
        for client in [host, spammer, fan] { try client.login() }
        for _ in 0..<10 {
            let call = try spammer.dial(9000)
            try spammer.act(.callCancel, call.callID)
        }
        XCTAssertThrowsError(try spammer.dial(9000)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .callRateLimited)
            XCTAssertTrue((error as? ShowroomError)?.message.contains("call again in") ?? false)
        }
        XCTAssertNoThrow(try fan.dial(9000), "another caller is not held back")
        cluster.network.advance(by: .seconds(5))
        for client in [host, spammer, fan] { try client.poll() }
        cluster.network.advance(by: .seconds(5))
        try spammer.poll()
        try fan.poll()
        try host.poll()
        // The window has passed: it may call again (and finds the host busy with the fan).
        XCTAssertEqual(try spammer.dial(9000).endReason, "busy")
    }

    func testTheCallingTimeoutEndsBothSidesOnce() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 3001, viewerVia: "signal-c", hostVia: "signal-c")
        let h = host.uid
        let call = try viewer.dial(h, timeoutMs: 3_000)
        for _ in 0..<3 {
            cluster.network.advance(by: .seconds(1))
            try viewer.poll()
            try host.poll()
        }
        XCTAssertEqual(viewer.told.last, "1 14 3")
        XCTAssertEqual(host.told.last, "1 18 4")
        XCTAssertEqual(viewer.told.filter { $0.hasPrefix("1 ") }.count, 1, "ended once")
        XCTAssertThrowsError(try host.act(.callAccept, call.callID)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .callEnded)
        }
    }

    func testCancelAgainstAcceptEndsOneWay() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 3101, viewerVia: "signal-a", hostVia: "signal-a")
        let h = host.uid
        let call = try viewer.dial(h)
        try viewer.act(.callCancel, call.callID)
        XCTAssertThrowsError(try host.act(.callAccept, call.callID)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .callEnded)
        }
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(viewer.told.last, "1 11 109")
        XCTAssertEqual(host.told.last, "1 12 110")
    }

    func testAPartyThatLosesSignalingIsWaitedForThenTheCallEndsAndItIsKicked() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 4001, viewerVia: "signal-b", hostVia: "signal-a")
        let (v, h) = (viewer.uid, host.uid)
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        // The viewer goes silent; the host keeps polling.
        for _ in 0..<11 {
            cluster.network.advance(by: .seconds(1))
            try host.poll()
        }
        XCTAssertEqual(host.told.last, "4 0 108", "remoteLeft, still connected")
        for _ in 0..<30 {
            cluster.network.advance(by: .seconds(1))
            try host.poll()
        }
        XCTAssertEqual(host.told.last, "1 10 106", "the call ended for the host")
        // The leaver is kicked, and the channel sealed for both.
        XCTAssertEqual(Set(cluster.kicks.map(\.uid)), [v, h])
        XCTAssertEqual(Set(cluster.kicks.map(\.channel)), [call.channel])
    }

    func testWhatTheEdgesSawOfTheCallChannelReachesTheOtherSide() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 4201, viewerVia: "signal-b", hostVia: "signal-a")
        let (v, h) = (viewer.uid, host.uid)
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        XCTAssertEqual(Names.callee(ofCallChannel: call.channel), h, "the channel names its callee")
        // As a coordinator passes on its edges' reports: to the owner of the callee.
        func report(_ uid: UInt32, joined: Bool, channel: String? = nil) throws {
            _ = try cluster.node(cluster.owner(of: h)).ask(.callChannelActivity, SignalChannelActivities.with {
                $0.activities = [SignalChannelActivity.with {
                    $0.channel = channel ?? call.channel
                    $0.uid = uid
                    $0.joined = joined
                }]
            }, as: SignalChannelActivitiesResponse.self)
        }
        try report(v, joined: false)
        try host.poll()
        XCTAssertEqual(host.told.last, "4 0 108", "remoteLeft")
        try report(v, joined: true)
        try host.poll()
        XCTAssertEqual(host.told.last, "4 0 107", "remoteJoined")
        // Reports of other channels, or of strangers, change nothing.
        try report(v, joined: false, channel: "call-\(h)-unknown")
        try report(31337, joined: false)
        try host.poll()
        XCTAssertEqual(host.told.last, "4 0 107")
        // A leave not followed by a join ends the call after the grace.
        try report(v, joined: false)
        for _ in 0..<32 {
            cluster.network.advance(by: .seconds(1))
            try host.poll()
            try viewer.poll()
        }
        XCTAssertEqual(host.told.last, "1 10 106")
        XCTAssertEqual(viewer.told.last, "1 9 112", "the leaver: localHangup, localLeft")
    }

    func testALoginWithinTheGraceContinuesTheCall() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 4101, viewerVia: "signal-b", hostVia: "signal-a")
        let (v, h) = (viewer.uid, host.uid)
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        for _ in 0..<11 {
            cluster.network.advance(by: .seconds(1))
            try host.poll()
        }
        try viewer.login()
        try host.poll()
        XCTAssertEqual(host.told.last, "4 0 107", "remoteJoined")
        for _ in 0..<40 {
            cluster.network.advance(by: .seconds(1))
            try host.poll()
            try viewer.poll()
        }
        XCTAssertEqual(try presence([v, h], at: cluster.node("signal-c")), [.inCall, .inCall])
    }

    func testWhenTheNodeHoldingAConnectedCallDiesItsSuccessorGoesOnWithIt() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 8001, viewerVia: nil, hostVia: nil)
        let (v, h) = (viewer.uid, host.uid)
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(viewer.told.last, "4 0 0", "connected")
        cluster.flush()
        // The callee's node holds the call and the callee's session; it dies.
        let lost = cluster.owner(of: h)
        cluster.network.kill(lost)
        cluster.network.membershipChanged()
        XCTAssertNotEqual(cluster.owner(of: h), lost)
        // The callee's client goes on with the same session at another node.
        host.via = cluster.node(cluster.owner(of: v))
        try host.poll()
        try viewer.poll()
        XCTAssertEqual(viewer.told.last, "4 0 0", "still connected: nothing failed")
        XCTAssertEqual(try presence([v, h], at: host.via), [.inCall, .inCall])
        // The call's timers and hang-up go on at the successor, and its channel is sealed there.
        try host.act(.callHangup, call.callID, reason: "bye")
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(viewer.told.last, "1 10 106", "prepared, remoteHangup")
        XCTAssertEqual(host.told.last, "1 9 105", "prepared, localHangup")
        XCTAssertGreaterThan(viewer.notices.last!.sequence, CallBook.adoptedSequenceGap, "numbered past the lost node's notices")
        XCTAssertEqual(Set(cluster.kicks.filter { $0.channel == call.channel }.map(\.uid)), [v, h])
        XCTAssertEqual(try presence([v, h], at: host.via), [.online, .online])
    }

    func testARingingCallWhoseNodeDiedTimesOutOnceAtTheSuccessor() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 8101, viewerVia: nil, hostVia: nil)
        let h = host.uid
        _ = try viewer.dial(h, timeoutMs: 5_000)
        cluster.flush()
        cluster.network.kill(cluster.owner(of: h))
        cluster.network.membershipChanged()
        host.via = viewer.via
        for _ in 0..<8 {
            cluster.network.advance(by: .seconds(1))
            try viewer.poll()
            try host.poll()
        }
        XCTAssertEqual(viewer.told.filter { $0.hasPrefix("1 ") }, ["1 14 3"], "callingTimeout, once")
        XCTAssertEqual(host.told.filter { $0.hasPrefix("1 ") }, ["1 18 4"], "remoteCallingTimeout, once")
    }

    func testACallNotReplicatedBeforeItsNodeDiedFailsForTheOtherParty() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 8201, viewerVia: nil, hostVia: nil)
        let (v, h) = (viewer.uid, host.uid)
        cluster.flush()
        let call = try viewer.dial(h, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        try viewer.poll()
        XCTAssertEqual(viewer.told.last, "4 0 0", "connected")
        // Dies within the flush interval: the call never reached the successor.
        cluster.network.kill(cluster.owner(of: h))
        cluster.network.membershipChanged()
        try viewer.poll()
        XCTAssertEqual(viewer.told.last, "10 4 0", "failed, messageFailed")
        XCTAssertEqual(viewer.notices.last?.call.endReason, "callSignalLost")
        XCTAssertEqual(try presence([v], at: viewer.via), [.online], "free to call again")
    }

    func testANewNodeTakesOverItsUsersAndTheirCallsFromTheFormerOwners() throws {
        let cluster = CallSignalHarness(nodes: ["signal-a"])
        // Users the newcomer will own.
        let ring = OwnerRing(.callsignal, memberIDs: ["signal-a", "signal-new"])
        let owned = (9001...9999).map(UInt32.init).filter { ring.owner(of: "uid/\($0)") == "signal-new" }
        let viewer = SignalClient(owned[0], via: cluster.node("signal-a"))
        let host = SignalClient(owned[1], via: cluster.node("signal-a"))
        try viewer.login()
        try host.login()
        let call = try viewer.dial(host.uid, waitFirstFrame: false)
        try host.act(.callAccept, call.callID)
        cluster.start("signal-new")
        cluster.network.membershipChanged()
        XCTAssertNil(cluster.shells["signal-a"]!.book.call(of: host.uid), "the former owner gave the call up")
        XCTAssertEqual(cluster.shells["signal-new"]!.book.call(of: host.uid)?.id, call.callID, "the newcomer holds it")
        try viewer.poll()
        try host.act(.callHangup, call.callID)
        try viewer.poll()
        XCTAssertEqual(viewer.told.last, "1 10 106", "hung up through the new owner")
    }

    func testAMalformedReplicaIsRefusedAndChangesNothing() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let node = cluster.node("signal-a")
        var call = SignalCallRecord()
        call.callID = "7001-abc"
        call.caller = 7002
        call.callee = 7001
        call.channel = "call-7001-abc"
        call.phase = "connected"
        func replica(_ change: (inout SignalUserRecord) -> Void) -> SignalReplicaBatch {
            var record = SignalUserRecord()
            record.uid = 7001
            record.version = 1
            record.writer = "signal-b"
            record.ownedCall = call
            change(&record)
            return SignalReplicaBatch.with { $0.records = [record] }
        }
        let hostile: [SignalReplicaBatch] = [
            replica { $0.uid = 0 },
            replica { $0.writer = "" },
            replica { $0.ownedCall.callee = 7003 },
            replica { $0.ownedCall.channel = "room-1" },
            replica { $0.ownedCall.phase = "ended" },
            replica { $0.ownedCall.phase = "ended"; $0.ownedCall.endReason = "vanished"; $0.ownedCall.endedAtMs = 5 },
            replica { $0.ownedCall.phase = "ended"; $0.ownedCall.endReason = "hungUp"; $0.ownedCall.endedAtMs = 5; $0.ownedCall.endedBy = 9 },
            replica { $0.ownedCall.phase = "ended"; $0.ownedCall.endReason = "hungUp" },
            replica {
                $0.ownedCall.phase = "ended"
                $0.ownedCall.endReason = "hungUp"
                $0.ownedCall.endedAtMs = 5
                $0.ownedCall.endMessage = String(repeating: "x", count: 300)
            },
            replica { $0.ownedCall.endReason = "hungUp" },
            replica { $0.ownedCall.firstFrames = [42] },
            replica { $0.ownedCall.extension = Dictionary(uniqueKeysWithValues: (0..<100).map { ("k\($0)", "v") }) },
            replica { $0.session.sessionID = "7002-forged" },
            SignalReplicaBatch.with { $0.records = Array(repeating: replica { _ in }.records[0], count: 2_001) },
        ]
        for batch in hostile {
            XCTAssertThrowsError(try node.ask(.callReplica, batch, as: SignalReplicaBatchResponse.self)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
            }
        }
        XCTAssertTrue(cluster.shells["signal-a"]!.records.entries.isEmpty, "nothing kept")
        XCTAssertTrue(cluster.shells["signal-a"]!.book.calls.isEmpty, "nothing adopted")
        // The well-formed one is kept.
        _ = try node.ask(.callReplica, replica { _ in }, as: SignalReplicaBatchResponse.self)
        XCTAssertNotNil(cluster.shells["signal-a"]!.records[UserRecord.key(of: 7001)])
        // So is an ended call with its end, which beats the active copy held.
        _ = try node.ask(.callReplica, replica {
            $0.ownedCall.phase = "ended"
            $0.ownedCall.endReason = "hungUp"
            $0.ownedCall.endedBy = 7002
            $0.ownedCall.endMessage = "bye"
            $0.ownedCall.endedAtMs = 5
        }, as: SignalReplicaBatchResponse.self)
        let ended = cluster.shells["signal-a"]!.records[UserRecord.key(of: 7001)]?.ownedCall
        XCTAssertEqual(ended?.phase, .ended)
        XCTAssertEqual(ended?.end, Call.End(reason: .hungUp, by: 7002, message: "bye"))
        XCTAssertEqual(ended?.endedAtMs, 5)
    }

    func testTheHostsLiveRoomAndTheSealReachACoordinatorThatWasAwayAWhile() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 8301, viewerVia: "signal-a", hostVia: "signal-b")
        let (v, h) = (viewer.uid, host.uid)
        let call = try viewer.dial(h, waitFirstFrame: false)
        _ = try host.via.ask(.callAccept, SignalCallActionRequest.with {
            $0.sessionID = host.sessionID
            $0.callID = call.callID
            $0.liveRoomID = "show-\(h)"
        }, as: SignalCallActionResponse.self)
        XCTAssertEqual(cluster.roomStatuses, ["show-\(h) \(h) call \(call.callID)"])
        // The coordinator is away when the call ends: the status is sent again until it answers.
        cluster.network.hold("coordinator-1")
        try viewer.act(.callHangup, call.callID)
        cluster.network.dropHeld("coordinator-1")
        XCTAssertEqual(cluster.roomStatuses.count, 1)
        cluster.network.advance(by: .seconds(2))
        XCTAssertEqual(cluster.roomStatuses.last, "show-\(h) \(h) idle \(call.callID)")
        XCTAssertEqual(Set(cluster.kicks.filter { $0.channel == call.channel }.map(\.uid)), [v, h], "the seal went again too")
        // A bad live room id is refused at once.
        XCTAssertThrowsError(try viewer.via.ask(.callDial, SignalDialRequest.with {
            $0.sessionID = viewer.sessionID
            $0.callee = h
            $0.liveRoomID = String(repeating: "x", count: 200)
        }, as: SignalDialResponse.self)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument)
        }
    }

    func testAParkedPollIsAnsweredWhenANoticeArrives() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (v, h) = cluster.uidsWithDifferentOwners(from: 6001)
        let viewer = SignalClient(v, via: cluster.node("signal-a"))
        let host = SignalClient(h, via: cluster.node("signal-b"))
        try host.login()
        var answer: Result<WireEnvelope, ShowroomError>?
        try host.via.begin(.callPoll, SignalPollRequest.with {
            $0.sessionID = host.sessionID
            $0.maxWaitMs = 15_000
        }) { answer = $0 }
        cluster.network.run()
        XCTAssertNil(answer, "nothing to say yet")
        cluster.network.advance(by: .seconds(12))
        XCTAssertNil(answer, "still parked, and the session kept alive by it")
        try viewer.login()
        _ = try viewer.dial(h)
        let notices = try XCTUnwrap(answer).get().decodeBody(SignalPollResponse.self).notices
        XCTAssertEqual(notices.map(\.event), [0])
        XCTAssertEqual(notices.first?.state, 2)
    }

    func testANoticeInAPollAnswerTheClientNeverTookComesWithItsNextPoll() throws {
        // One poll reaches the host's owner twice (a path that duplicated it): the second copy
        // ends the first, parked, and parks in its place. The asker keeps the answer that came
        // first, the empty one; the ring goes in the other.
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 6101, viewerVia: nil, hostVia: nil)
        let poll = SignalPollRequest.with {
            $0.sessionID = host.sessionID
            $0.maxWaitMs = 15_000
        }
        var kept: Result<WireEnvelope, ShowroomError>?
        var dropped: Result<WireEnvelope, ShowroomError>?
        try host.via.begin(.callPoll, poll) { kept = $0 }
        try host.via.begin(.callPoll, poll) { dropped = $0 }
        cluster.network.run()
        XCTAssertEqual(try XCTUnwrap(kept).get().decodeBody(SignalPollResponse.self).notices.count, 0)
        let call = try viewer.dial(host.uid)
        XCTAssertEqual(try XCTUnwrap(dropped).get().decodeBody(SignalPollResponse.self).notices.map(\.callID), [call.callID])

        XCTAssertEqual(try host.poll().map(\.callID), [call.callID], "the next poll carries the ring again")
        XCTAssertEqual(host.told, ["2 0 0"])
        XCTAssertEqual(try host.poll(), [], "carried twice: done")
    }

    func testOnlyANodesLossNoticeIsTakenAsALossToConfirm() {
        let lost = SignalNotice(lostCallOf: 2001, UserRecord.InCall(callID: "1001-abc", owner: "callsignal-2"))
        XCTAssertTrue(lost.tellsLostCall)
        // An owner's notice of a failed call, or one naming the loss with another number or state,
        // is delivered as it is.
        var failed = lost
        failed.sequence = 7
        XCTAssertFalse(failed.tellsLostCall)
        var prepared = lost
        prepared.state = UInt32(CallState.prepared.rawValue)
        XCTAssertFalse(prepared.tellsLostCall)
        var otherReason = lost
        otherReason.call.endReason = "timeout"
        XCTAssertFalse(otherReason.tellsLostCall)
        XCTAssertFalse(SignalNotice().tellsLostCall)
    }

    func testACallWhosePartysNodeFreedItEndsForBothWhenTheCallsOwnerAsks() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let (viewer, host) = try cluster.loggedInPair(from: 2001, viewerVia: nil, hostVia: nil)
        let call = try viewer.dial(host.uid)
        try host.act(.callAccept, call.callID)
        try viewer.act(.callFirstFrame, call.callID)
        try host.act(.callFirstFrame, call.callID)
        try viewer.poll()
        try host.poll()
        XCTAssertEqual(host.told.last, "4 13 113", "connected")

        // The viewer's node, cut off from the call's owner a moment ago, took the call for lost
        // and freed the viewer, while the call went on at its owner.
        let viewerNode = cluster.shells[cluster.owner(of: viewer.uid)]!
        viewerNode.perform(viewerNode.machine.callChecked(uid: viewer.uid, callID: call.callID,
                                                          owner: cluster.owner(of: host.uid), .lost))
        cluster.network.run()
        XCTAssertEqual(try presence([viewer.uid, host.uid], at: cluster.node("signal-c")), [.online, .inCall])

        // The call's owner asks the viewer's node within two check periods and ends the call for both.
        let owner = cluster.shells[cluster.owner(of: host.uid)]!
        for _ in 0..<(2 * CallSignalShell.Machine.callRecheckMs / 1_000 + 2) where owner.book.calls[call.callID]?.isActive == true {
            cluster.network.advance(by: .seconds(1))
            try viewer.poll()
            try host.poll()
        }
        XCTAssertEqual(owner.book.calls[call.callID]?.end?.reason, .partyLeft)
        XCTAssertEqual(owner.book.calls[call.callID]?.end?.by, viewer.uid)
        XCTAssertEqual(host.told.last, "1 10 106", "the host hears the viewer's side hang up")
        XCTAssertEqual(viewer.told.last?.hasPrefix("10 "), true, "the viewer was told its call failed")
        XCTAssertEqual(try presence([viewer.uid, host.uid], at: cluster.node("signal-c")), [.online, .online])
        XCTAssertEqual(Set(cluster.kicks.map(\.uid)), [viewer.uid, host.uid], "the channel is sealed for both")
    }

    func testAPartyCheckThatIsMalformedOrHugeIsRefusedClearly() throws {
        let cluster = CallSignalHarness(nodes: ids)
        let node = cluster.node("signal-a")
        for (uid, id) in [(UInt32(0), "1001-abc"), (1001, ""), (1001, "abc"), (1001, "0-abc"),
                          (1001, String(repeating: "9", count: 100_000) + "-x"), (1001, "1001-" + String(repeating: "f", count: 100_000))] {
            XCTAssertThrowsError(try node.ask(.callPartyCheck, SignalPartyCheck.with {
                $0.uid = uid
                $0.callID = id
            }, as: SignalPartyCheckResponse.self)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, "uid \(uid), call id of \(id.utf8.count) bytes")
                XCTAssertLessThan((error as? ShowroomError)?.message.utf8.count ?? .max, 300)
            }
        }
        // A well-formed check of a call nobody holds is answered with what the node notes, or that it cannot say.
        let uid = (UInt32(1)...1_000).first { cluster.owner(of: $0) == "signal-a" }!
        let answer = try node.ask(.callPartyCheck, SignalPartyCheck.with {
            $0.uid = uid
            $0.callID = "\(uid)-nosuchcall"
        }, as: SignalPartyCheckResponse.self)
        XCTAssertEqual(answer.note, .free)
        let elsewhere = (UInt32(1)...1_000).first { cluster.owner(of: $0) != "signal-a" }!
        XCTAssertEqual(try node.ask(.callPartyCheck, SignalPartyCheck.with {
            $0.uid = elsewhere
            $0.callID = "\(elsewhere)-nosuchcall"
        }, as: SignalPartyCheckResponse.self).note, .unsure, "not its user")
        XCTAssertEqual(SignalPartyCheckResponse.with { $0.note = .UNRECOGNIZED(9) }.partyNote, .unsure, "a note it does not know")
    }
}
