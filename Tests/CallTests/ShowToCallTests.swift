import Foundation
import Routing
import ServerAPI
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// Show → 1v1 on real processes with real media: a viewer of a live room calls its host, the host
/// pauses the live room, they connect on the call's private channel, and after the hang-up the host
/// is live again.
final class ShowToCallTests: XCTestCase {
    func testAViewerCallsTheHostWhoPausesTheShowAndResumesAfter() async throws {
        let cluster = try TestCluster(coordinators: 1, callsignals: 2, edges: 1)
        defer { cluster.down() }
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        let host: UInt32 = 1001, viewer: UInt32 = 2001, thief: UInt32 = 6666
        let live = "show-call-1"

        // The host is live; the viewer watches, decoding the host's video.
        let hostEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        await hostEngine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        await hostEngine.setLocalAudioSource(ToneMicrophone())
        let liveConnection = try await hostEngine.joinChannel(
            token: try TestApp.token(channel: live, uid: host), channel: live, uid: host, options: .broadcaster)
        let viewerEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        await viewerEngine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        let viewerLog = EventLog(viewerEngine)
        let liveSink = CountingVideoSink()
        let audienceConnection = ChannelConnection(channel: live, uid: viewer)
        try await viewerEngine.setupRemoteVideo(uid: host, connection: audienceConnection, sink: liveSink)
        try await viewerEngine.joinChannel(token: try TestApp.token(channel: live, uid: viewer, role: .subscriber),
                                           channel: live, uid: viewer, options: .audience)
        try await eventually("the viewer decodes the live host") { liveSink.statistics.frames > 0 }

        // The show is a room; its audience follows the room's events.
        let rooms = RoomService(seeds: seeds, loop: viewerEngine.loop)
        _ = try await rooms.createRoom(name: "show", ownerUid: host, roomID: live)
        let roomEvents = Mutex<[RoomEvent]>([])
        let roomReader = Task {
            for await event in rooms.events(for: live) { roomEvents.withLock { $0.append(event) } }
        }
        defer { roomReader.cancel() }

        // Both log in to signaling; the host accepts whatever rings.
        let parties = try await ShowCallParties.start(host: host, hostEngine, viewer: viewer, viewerEngine, seeds: seeds, live: liveConnection)
        defer { parties.stop() }
        let (hostCalls, viewerCalls, hostLog, viewerLog2) = (parties.hostCalls, parties.viewerCalls, parties.hostLog, parties.viewerLog)
        let online = try await viewerCalls.presence(of: [host, thief])
        XCTAssertEqual(online, [host: .online, thief: .offline])

        try await viewerCalls.call(remoteUserId: host)
        try await viewerLog2.wait("the viewer connected") { if case .connected = $0 { true } else { false } }
        try await hostLog.wait("the host connected") { if case .connected = $0 { true } else { false } }
        // The state changes in CallAPI's order; each side also hears the other join the call's
        // channel (remoteJoined 107, an event without a change), whenever that happens.
        XCTAssertEqual(viewerLog2.states.filter { !$0.hasSuffix(" 0 107") }.prefix(3), ["2 0 99", "3 7 103", "4 13 113"])
        XCTAssertEqual(hostLog.states.filter { !$0.hasSuffix(" 0 107") }.prefix(3), ["2 0 0", "3 8 104", "4 13 113"])
        try await viewerLog2.wait("the viewer hears the host join the call's channel") {
            if case .stateChanged(_, .none, .remoteJoined, _) = $0 { true } else { false }
        }
        let inCall = try await hostCalls.presence(of: [host, viewer])
        XCTAssertEqual(inCall, [host: .inCall, viewer: .inCall])
        let call = try XCTUnwrap(viewerCalls.currentCall)
        XCTAssertTrue(call.channel.hasPrefix("call-"))
        XCTAssertNotNil(viewerCalls.timeline["recvFirstFrame"])
        // CallAPI's costTimeMap steps, each side's own (engine events reach the timeline on their own task).
        let steps = ["localUserJoinChannel", "remoteUserJoinChannel", "localFirstFrameDidPublish", "recvFirstFrame", "connected"]
        try await eventually("both timelines have every step: \(viewerCalls.timeline.keys.sorted()), \(hostCalls.timeline.keys.sorted())") {
            Set(viewerCalls.timeline.keys).isSuperset(of: steps + ["remoteUserRecvCall"])
                && Set(hostCalls.timeline.keys).isSuperset(of: steps + ["acceptCall"])
        }
        // The status view lists the call with its state, channel, edge and owning node.
        // (The edge comes from the edges' channel reports, which follow the join by a moment.)
        nonisolated(unsafe) var listed: [String: Any] = [:]
        try await eventually("the status view lists the call on its edge") {
            let document = try JSONSerialization.jsonObject(with: Data(try cluster.status(json: true).utf8)) as? [String: Any]
            listed = (document?["calls"] as? [[String: Any]])?.first { $0["call_id"] as? String == call.callID } ?? [:]
            return listed["edge"] as? String == "edge-1"
        }
        XCTAssertEqual(listed["state"] as? String, "connected")
        XCTAssertEqual(listed["channel"] as? String, call.channel)
        XCTAssertTrue((listed["node"] as? String)?.hasPrefix("callsignal-") ?? false)

        // The room shows its host in the call, to whoever reads it and to its audience's events.
        try await eventually("the room shows its host in the call") {
            if case .call(call.callID, _) = try await rooms.room(live).interaction { true } else { false }
        }
        try await eventually("the room's audience heard it") {
            roomEvents.withLock { $0.contains { if case .interactionChanged(let room) = $0, case .call = room.interaction { true } else { false } } }
        }

        // The show is paused: the audience hears of it as a video state change, not an offline.
        _ = try await viewerLog.wait("the live host's video stops for the audience") {
            if case .remoteVideoStateChanged(let connection, let uid, .stopped, _) = $0 { connection.channel == live && uid == host } else { false }
        }

        // A third user with a valid wildcard token and the channel's name stays out.
        let thiefEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        await assertFails(.channelPrivate, "a wildcard token in a call's channel") {
            try await thiefEngine.joinChannel(token: try TestApp.token(channel: "", uid: 0), channel: call.channel, uid: thief,
                                              options: .audience)
        }

        // The viewer's media leaves the call's channel (its signaling stays): the edge's report
        // reaches the call, and the host hears remoteLeft (108) while the call goes on.
        let viewerConnections = await viewerEngine.connections()
        let callConnection = try XCTUnwrap(viewerConnections.first { $0.channel == call.channel })
        try await viewerEngine.leaveChannelEx(callConnection)
        try await hostLog.wait("the host hears the viewer left the call's channel") {
            if case .stateChanged(.connected, .none, .remoteLeft, _) = $0 { true } else { false }
        }

        // The viewer hangs up: both sides end, the host is live again and decoded again.
        try await viewerCalls.hangup(remoteUserId: host, reason: "bye")
        try await hostLog.wait("the host's call ended") { if case .disconnected = $0 { true } else { false } }
        try await viewerLog2.wait("the viewer's call ended") { if case .disconnected = $0 { true } else { false } }
        XCTAssertEqual(hostLog.states.last, "1 10 106")
        for log in [hostLog, viewerLog2] {
            XCTAssertEqual(log.all.filter { if case .connected = $0 { true } else { false } }.count, 1,
                           "connected once, whatever events followed")
        }
        XCTAssertEqual(viewerLog2.states.last, "1 9 105")
        let before = liveSink.statistics.frames
        try await eventually("the audience decodes the host again") { liveSink.statistics.frames > before + 5 }
        try await eventually("the room shows its host live on its own again") { try await rooms.room(live).interaction == .idle }
        try await eventually("the room's audience heard that too") {
            roomEvents.withLock { $0.last.map { if case .interactionChanged(let room) = $0 { room.interaction == .idle } else { false } } ?? false }
        }
        await rooms.shutdown()

        // The channel is sealed: the former partner's own call token no longer opens it.
        let rejoin = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        try await eventually("the sealed channel refuses its former party") {
            do {
                try await rejoin.joinChannel(token: try TestApp.token(channel: call.channel, uid: viewer), channel: call.channel,
                                             uid: viewer, options: .audience)
                try await rejoin.leaveChannel()
                return false
            } catch let error as ShowroomError {
                return error.code == .banned
            }
        }

        await hostCalls.logout()
        await viewerCalls.logout()
        await hostCalls.close()
        await viewerCalls.close()
        await hostEngine.shutdown()
        await viewerEngine.shutdown()
        await thiefEngine.shutdown()
        await rejoin.shutdown()
    }

    func testWhenTheCallSignalNodeHoldingCallsDiesItsSuccessorGoesOnWithThem() async throws {
        let cluster = try TestCluster(coordinators: 1, callsignals: 2, edges: 1)
        defer { cluster.down() }
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        // Callers owned by callsignal-1; callees (and so their calls, and their sessions) by
        // callsignal-2, which dies.
        let ring = OwnerRing(.callsignal, memberIDs: ["callsignal-1", "callsignal-2"])
        let callers = (3000...3999).map(UInt32.init).filter { ring.owner(of: "uid/\($0)") == "callsignal-1" }.prefix(2)
        let callees = (4000...4999).map(UInt32.init).filter { ring.owner(of: "uid/\($0)") == "callsignal-2" }.prefix(2)
        let uids = Array(callers) + Array(callees)  // a, c calling b, d
        var engines: [ShowroomEngine] = []
        var clients: [CallClient] = []
        // When each frame of the connected call's video reached the first caller.
        let arrivals = Mutex<[ContinuousClock.Instant]>([])
        let decoder = DecodingVideoSink()
        for uid in uids {
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
            await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            engines.append(engine)
            let client = CallClient(uid: uid, engine: engine, seeds: seeds, pollWait: .seconds(10))
            if uid == uids[0] {
                try await client.prepareForCall(PrepareConfig(remoteVideoSink: ClosureVideoSink { frame in
                    arrivals.withLock { if $0.count < 10_000 { $0.append(.now) } }
                    return decoder.consume(frame)
                }))
            }
            clients.append(client)
        }
        let calleeB = clients[2]
        let logs = clients.enumerated().map { index, client in
            CallEventLog(client) { event in
                // b accepts at once; d lets its call ring.
                if index == 2, case .stateChanged(.calling, _, _, let info?) = event { try? await calleeB.accept(remoteUserId: info.caller) }
            }
        }
        defer { for log in logs { log.stop() } }
        for (uid, client) in zip(uids, clients) { try await client.login(token: TestApp.loginToken(uid: uid)) }
        try await clients[0].call(remoteUserId: uids[2])
        try await clients[1].call(remoteUserId: uids[3])
        for index in [0, 2] {
            try await logs[index].wait("call a-b connected for \(uids[index])") { if case .connected = $0 { true } else { false } }
        }
        try await logs[3].wait("call c-d rings at d") { if case .stateChanged(.calling, _, _, _) = $0 { true } else { false } }
        try await eventually("a decodes b") { arrivals.withLock { $0.count } >= 5 }

        let killedAt = ContinuousClock.now
        try cluster.kill("callsignal-2")
        // b and d keep their sessions: their polls reach callsignal-1, which took them over.
        for index in [2, 3] {
            try await logs[index].wait("uid \(uids[index]) signals through callsignal-1", timeout: .seconds(3)) {
                if case .signalingMoved("callsignal-1") = $0 { true } else { false }
            }
        }
        // The ringing call goes on: d accepts it through the successor, and it connects.
        let ringing = try XCTUnwrap(clients[3].currentCall)
        try await clients[3].accept(remoteUserId: ringing.caller)
        for index in [1, 3] {
            try await logs[index].wait("call c-d connected after the failover for \(uids[index])") {
                if case .connected = $0 { true } else { false }
            }
        }
        // The connected call's media never stopped, and it can still be hung up.
        try await eventually("a keeps decoding b") {
            arrivals.withLock { $0.last.map { $0 - killedAt > .seconds(2) } ?? false }
        }
        let gaps = arrivals.withLock { times in zip(times.dropFirst(), times).map { $0 - $1 } }
        XCTAssertLessThan(gaps.max() ?? .zero, .seconds(1), "the call's media went on while its signaling moved")
        try await clients[2].hangup(remoteUserId: uids[0])
        for index in [0, 2] {
            try await logs[index].wait("call a-b ended by b for \(uids[index])") {
                if case .disconnected(_, let by, _) = $0 { by == uids[2] } else { false }
            }
        }
        try await clients[1].hangup(remoteUserId: uids[3])
        try await logs[3].wait("call c-d ended by c") { if case .disconnected = $0 { true } else { false } }
        // Nobody failed, nobody logged in again: the sessions and calls moved.
        for log in logs {
            XCTAssertFalse(log.states.contains { $0.hasPrefix("10 ") }, "no failed state: \(log.states)")
            XCTAssertEqual(log.all.filter { if case .loggedIn = $0 { true } else { false } }.count, 1)
        }
        let presence = try await clients[0].presence(of: uids)
        XCTAssertEqual(presence, Dictionary(uniqueKeysWithValues: uids.map { ($0, .online) }))
        for client in clients {
            await client.logout()
            await client.close()
        }
        for engine in engines { await engine.shutdown() }
    }

    func testACallsChannelIsPlacedOnTheEdgeWhereTheViewerWatchesTheHostSoNobodyOpensASession() async throws {
        let cluster = try TestCluster(coordinators: 1, callsignals: 1, edges: 3)
        defer { cluster.down() }
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        let host: UInt32 = 1201, viewer: UInt32 = 2201
        let live = "show-placed-1"
        let hostEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        let viewerEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        for engine in [hostEngine, viewerEngine] {
            await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        }
        let liveConnection = try await hostEngine.joinChannel(
            token: try TestApp.token(channel: live, uid: host), channel: live, uid: host, options: .broadcaster)
        try await viewerEngine.joinChannel(token: try TestApp.token(channel: live, uid: viewer, role: .subscriber),
                                           channel: live, uid: viewer, options: .audience)
        let hostOn = await hostEngine.edgeID(of: liveConnection)
        let liveEdge = try XCTUnwrap(hostOn)
        let watchedEdge = await viewerEngine.edgeID(of: ChannelConnection(channel: live, uid: viewer))
        XCTAssertEqual(watchedEdge, liveEdge)

        let parties = try await ShowCallParties.start(host: host, hostEngine, viewer: viewer, viewerEngine, seeds: seeds, live: liveConnection)
        defer { parties.stop() }
        let (hostCalls, viewerCalls, hostLog, viewerLog) = (parties.hostCalls, parties.viewerCalls, parties.hostLog, parties.viewerLog)
        let sessionsBefore = (await hostEngine.statistics().sessionsOpened, await viewerEngine.statistics().sessionsOpened)

        // Each call's channel is new and named by the server: without the preference, three calls
        // would all land on the live edge only by a 1-in-27 chance.
        for round in 1...3 {
            try await viewerCalls.call(remoteUserId: host)
            for log in [viewerLog, hostLog] {
                try await eventually("call \(round) connected on both sides") {
                    log.all.filter { if case .connected = $0 { true } else { false } }.count == round
                }
            }
            let call = try XCTUnwrap(viewerCalls.currentCall)
            let viewerEdge = await viewerEngine.edgeID(of: ChannelConnection(channel: call.channel, uid: viewer))
            let hostEdge = await hostEngine.edgeID(of: ChannelConnection(channel: call.channel, uid: host))
            XCTAssertEqual(viewerEdge, liveEdge, "call \(round)")
            XCTAssertEqual(hostEdge, liveEdge, "call \(round)")
            try await viewerCalls.hangup(remoteUserId: host)
            for log in [viewerLog, hostLog] {
                try await eventually("call \(round) ended on both sides") {
                    log.all.filter { if case .disconnected = $0 { true } else { false } }.count == round
                }
            }
        }
        let sessionsAfter = (await hostEngine.statistics().sessionsOpened, await viewerEngine.statistics().sessionsOpened)
        XCTAssertEqual(sessionsAfter.0, sessionsBefore.0, "the host opened no session for its calls")
        XCTAssertEqual(sessionsAfter.1, sessionsBefore.1, "the viewer opened no session for its calls")

        for client in [hostCalls, viewerCalls] {
            await client.logout()
            await client.close()
        }
        for engine in [hostEngine, viewerEngine] { await engine.shutdown() }
    }

    func testACallsStartConnectAndEndReachTheWebhooksSigned() async throws {
        let receiver = try await WebhookReceiver.start(secret: "call-events-secret")
        let cluster = try TestCluster(coordinators: 1, callsignals: 1, edges: 1, webhookURLs: [receiver.url],
                                      webhookSecret: "call-events-secret")
        defer { cluster.down() }
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        let caller: UInt32 = 2101, callee: UInt32 = 1101
        var engines: [ShowroomEngine] = []
        var clients: [CallClient] = []
        for uid in [caller, callee] {
            let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
            await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            engines.append(engine)
            clients.append(CallClient(uid: uid, engine: engine, seeds: seeds))
        }
        let calleeClient = clients[1]
        let callerLog = CallEventLog(clients[0])
        let calleeLog = CallEventLog(calleeClient) { event in
            if case .stateChanged(.calling, _, _, let info?) = event { try? await calleeClient.accept(remoteUserId: info.caller) }
        }
        defer {
            callerLog.stop()
            calleeLog.stop()
        }
        try await clients[0].login(token: TestApp.loginToken(uid: caller))
        try await clients[1].login(token: TestApp.loginToken(uid: callee))
        try await clients[0].call(remoteUserId: callee)
        try await callerLog.wait("connected") { if case .connected = $0 { true } else { false } }
        let callID = try XCTUnwrap(clients[0].currentCall?.callID)
        try await clients[1].hangup(remoteUserId: caller, reason: "show time")
        try await callerLog.wait("ended") { if case .disconnected = $0 { true } else { false } }

        try await eventually("the call's three events reached the webhook") { receiver.callEvents(callID: callID).count == 3 }
        let events = receiver.callEvents(callID: callID)
        XCTAssertEqual(events.compactMap { $0["eventType"] as? Int }, [201, 202, 203])
        XCTAssertTrue(receiver.allSignaturesValid)
        let ended = try XCTUnwrap(events.last?["payload"] as? [String: Any])
        XCTAssertEqual(ended["caller"] as? Int, Int(caller))
        XCTAssertEqual(ended["endReason"] as? String, "hungUp")
        XCTAssertEqual(ended["endedBy"] as? Int, Int(callee))
        XCTAssertGreaterThan(ended["durationMs"] as? Int ?? 0, 0)
        XCTAssertTrue((ended["channelName"] as? String ?? "").hasPrefix("call-\(callee)-"), "the call's private channel")

        for client in clients {
            await client.logout()
            await client.close()
        }
        for engine in engines { await engine.shutdown() }
        await receiver.stop()
    }

    func testAPaidCallEndedThroughTheServerAPIEndsForBothPartiesWithItsReason() async throws {
        let secret = "paid-calls-secret-0123456789"
        let cluster = try TestCluster(coordinators: 1, callsignals: 1, edges: 1, coordinatorSettings: [
            "apiKeys": [["id": "billing", "secretSHA256": Hex.encode(CustomerKey.hash(secret: secret)), "scopes": ["read", "calls"]]],
        ])
        defer { cluster.down() }
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        let host: UInt32 = 3001, viewer: UInt32 = 4001
        let live = "paid-call-show"
        let hostEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        await hostEngine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        let liveConnection = try await hostEngine.joinChannel(
            token: try TestApp.token(channel: live, uid: host), channel: live, uid: host, options: .broadcaster)
        let viewerEngine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)))
        await viewerEngine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
        let parties = try await ShowCallParties.start(host: host, hostEngine, viewer: viewer, viewerEngine, seeds: seeds, live: liveConnection)
        defer { parties.stop() }
        try await parties.viewerCalls.call(remoteUserId: host)
        try await parties.viewerLog.wait("the viewer connected") { if case .connected = $0 { true } else { false } }
        try await parties.hostLog.wait("the host connected") { if case .connected = $0 { true } else { false } }

        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: (id: "billing", secret: secret))
        let presence = try await api.send("GET", "/v1/presence?uids=\(host),\(viewer),99")
        XCTAssertEqual(presence.status, 200, presence.text)
        let states = Dictionary(uniqueKeysWithValues: (try presence.object()["users"] as? [[String: Any]] ?? []).map { ($0["uid"] as? Int ?? 0, $0["state"] as? String ?? "") })
        XCTAssertEqual(states, [Int(host): "in_call", Int(viewer): "in_call", 99: "offline"])
        let list = try await api.send("GET", "/v1/calls")
        let listed = try XCTUnwrap((try list.object()["calls"] as? [[String: Any]])?.first { $0["caller"] as? Int == Int(viewer) }, list.text)
        XCTAssertEqual(listed["callee"] as? Int, Int(host))
        XCTAssertEqual(listed["phase"] as? String, "connected")
        let callID = try XCTUnwrap(listed["call_id"] as? String)

        // The viewer's balance runs out: the business server ends the call.
        let ended = try await api.send("DELETE", "/v1/calls/\(callID)?reason=balance%20used%20up")
        XCTAssertEqual(ended.status, 200, ended.text)
        XCTAssertEqual(try ended.object()["phase"] as? String, "ended")
        try await parties.hostLog.wait("the host's call ended") { if case .disconnected = $0 { true } else { false } }
        try await parties.viewerLog.wait("the viewer's call ended") { if case .disconnected = $0 { true } else { false } }
        XCTAssertEqual(parties.hostLog.states.last, "1 10 106", "the host hears the other side hang up")
        XCTAssertEqual(parties.viewerLog.states.last, "1 9 105", "the viewer's side ends as its own hang-up")
        let again = try await api.send("DELETE", "/v1/calls/\(callID)")
        XCTAssertEqual(again.status, 409, "an ended call ends once: \(again.text)")
        let unknown = try await api.send("GET", "/v1/calls/12345-abcdef")
        XCTAssertEqual(unknown.status, 404)
        let readOnly = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: (id: "billing", secret: "wrong"))
        let refused = try await readOnly.send("DELETE", "/v1/calls/\(callID)")
        XCTAssertEqual(refused.status, 401)
        await readOnly.shutdown()
        await api.shutdown()
    }
}
