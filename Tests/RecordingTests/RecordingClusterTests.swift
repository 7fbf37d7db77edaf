import Foundation
import Ownership
import ServerAPI
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import XCTest

/// Recordings with real processes: started through the server API or by the rules, written by the
/// edges the publishers publish on, each finished file posted as a signed webhook, then read back
/// with ffprobe and decoded with ffmpeg.
final class RecordingClusterTests: XCTestCase {
    static let key = (id: "business", secret: "business-secret-0123456789")
    static let webhookSecret = "recording-webhook-secret"

    /// A cluster whose coordinators post to `receiver` and take the business key (scope recording).
    private func cluster(coordinators: Int = 1, edges: Int = 1, callsignals: Int = 0, receiver: WebhookReceiver, recordCalls: Bool = false, recordOwners: [UInt32] = [],
                         recordingDirectories: [String: String] = [:]) throws -> TestCluster {
        var settings: [String: Any] = [
            "apiKeys": [[
                "id": Self.key.id, "secretSHA256": Hex.encode(CustomerKey.hash(secret: Self.key.secret)),
                "scopes": ["read", "recording", "rooms"], "requestsPerSecond": 1000, "burst": 1000,
            ]],
        ]
        if recordCalls { settings["recordCalls"] = true }
        if !recordOwners.isEmpty { settings["recordOwners"] = recordOwners }
        return try TestCluster(coordinators: coordinators, callsignals: callsignals, edges: edges, webhookURLs: [receiver.url], webhookSecret: Self.webhookSecret,
                               coordinatorSettings: settings, recordingDirectories: recordingDirectories)
    }

    /// A publisher of the test pattern (320×240, 15 fps, a keyframe every 2 s) and a tone.
    private func publisher(_ cluster: TestCluster, channel: String, uid: UInt32) async throws -> ShowroomEngine {
        var configuration = EngineConfiguration(entry: .seeds([try cluster.clientEndpoint(of: "coordinator-1")]))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: 300, keyframeInterval: .seconds(2))
        let engine = try await ShowroomEngine(configuration: configuration)
        await engine.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: 15))
        await engine.setLocalAudioSource(ToneMicrophone())
        _ = try await engine.joinChannel(token: try TestApp.token(channel: channel, uid: uid, role: .publisher),
                                         channel: channel, uid: uid, options: .broadcaster)
        return engine
    }

    /// The recorded-file events of `uid` in `channel` the webhooks received, in order.
    private func files(_ receiver: WebhookReceiver, channel: String, uid: UInt32) -> [RoomRecordingFile] {
        receiver.events(channel: channel).filter { $0.type == .recordingFile && $0.uid == uid }.map(\.recording)
    }

    /// Checks a finished file as ffprobe and ffmpeg read it: both codecs, every frame decodes, audio
    /// and video start within 40 ms of each other, and its duration is the wall time it covers.
    private func assertPlayable(_ path: String, _ file: RoomRecordingFile, file line: StaticString = #filePath, _ number: UInt = #line) throws {
        let probe = try FFmpegTools.probe(path)
        XCTAssertEqual(probe.codec("video"), "vp8", path, file: line, line: number)
        XCTAssertEqual(probe.codec("audio"), "opus", path, file: line, line: number)
        XCTAssertEqual(try FFmpegTools.decodeErrors(path), "", "every frame of \(path) decodes", file: line, line: number)
        let duration = try XCTUnwrap(probe.duration, "\(path) has a duration", file: line, line: number)
        let wall = Double(file.endMs - file.startMs) / 1000
        XCTAssertEqual(duration, wall, accuracy: 0.5, "\(path): duration against the wall time it covers", file: line, line: number)
        XCTAssertEqual(Double(file.durationMs) / 1000, duration, accuracy: 0.1, "the webhook's duration", file: line, line: number)
        let video = try XCTUnwrap(probe.packetTimes("video").first, file: line, line: number)
        let audio = try XCTUnwrap(probe.packetTimes("audio").first, file: line, line: number)
        XCTAssertLessThanOrEqual(abs(video - audio), 0.040, "\(path): video starts at \(video) s, audio at \(audio) s", file: line, line: number)
        XCTAssertEqual(probe.packetFlags("video").first?.hasPrefix("K"), true, "\(path) starts on a keyframe", file: line, line: number)
    }

    /// A live room recorded for 20 s through the API of one coordinator while the channel's owner,
    /// the other, is SIGKILLed midway: the survivor goes on with the recording, in the same file.
    func testALiveRoomRecordedThroughTheAPIForTwentySecondsAcrossItsOwnersDeath() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.webhookSecret)
        let cluster = try cluster(coordinators: 2, receiver: receiver)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let ring = OwnerRing(.coordinator, memberIDs: ["coordinator-1", "coordinator-2"])
        var channel = ""
        repeat { channel = "rec-live-\(UInt32.random(in: 0 ... .max))" } while ring.owner(of: channel) != "coordinator-2"
        let host = try await publisher(cluster, channel: channel, uid: 42)
        do {
            // Hostile starts first: nothing is recorded for them.
            let bad = try await api.send("POST", "/v1/channels/\(channel)/recordings", json: ["uids": [0]])
            XCTAssertEqual(bad.status, 400, bad.text)
            let tooShort = try await api.send("POST", "/v1/channels/\(channel)/recordings", json: ["segment_seconds": 5])
            XCTAssertEqual(tooShort.status, 400, tooShort.text)
            let unknown = try await api.send("GET", "/v1/channels/\(channel)/recordings/rec-0123456789abcdef")
            XCTAssertEqual(unknown.status, 404, unknown.text)
            XCTAssertEqual(try unknown.object()["code"] as? String, "recordingNotFound", unknown.text)

            let started = try await api.send("POST", "/v1/channels/\(channel)/recordings", json: [String: Any]())
            XCTAssertEqual(started.status, 201, started.text)
            let id = try XCTUnwrap(try started.object()["id"] as? String)
            let again = try await api.send("POST", "/v1/channels/\(channel)/recordings", json: [String: Any]())
            XCTAssertEqual(again.status, 409, again.text)
            XCTAssertEqual(try again.object()["code"] as? String, "recordingConflict", again.text)
            try await eventually("the edge records uid 42") {
                let got = try await api.send("GET", "/v1/channels/\(channel)/recordings/\(id)")
                return (try got.object()["recording_uids"] as? [Int]) == [42]
            }
            let inProgress = try await api.send("GET", "/v1/recordings")
            let listed = try XCTUnwrap(try inProgress.object()["recordings"] as? [[String: Any]], inProgress.text)
            XCTAssertTrue(listed.contains { $0["channel"] as? String == channel && $0["uid"] as? Int == 42 && $0["edge"] as? String == "edge-1" })
            // The status view lists the recording in progress on the channel's row.
            let status = try JSONSerialization.jsonObject(with: Data(try cluster.status(json: true).utf8)) as? [String: Any]
            let row = (status?["channels"] as? [[String: Any]])?.first { $0["name"] as? String == channel }
            XCTAssertEqual(row?["recording"] as? [Int], [42], "the status view's channel row")
            XCTAssertTrue(try cluster.status().contains("RECORDING"))

            // The recording's length: a span of the show, not a wait for an event. The owner dies
            // 5 s in; the edge forgets its orders after 10 s, and coordinator-1's go on with them.
            try await Task.sleep(for: .seconds(5))
            try cluster.kill("coordinator-2")
            try await Task.sleep(for: .seconds(15))
            let stopped = try await api.send("POST", "/v1/channels/\(channel)/recordings/\(id)/stop")
            XCTAssertEqual(stopped.status, 200, stopped.text)
            XCTAssertEqual(try stopped.object()["running"] as? Bool, false)

            try await eventually("the finished file's webhook") { !files(receiver, channel: channel, uid: 42).isEmpty }
            let file = try XCTUnwrap(files(receiver, channel: channel, uid: 42).first)
            XCTAssertEqual(file.recordingID, id)
            XCTAssertEqual(file.codecs, ["vp8", "opus"])
            XCTAssertEqual(file.failure, "")
            XCTAssertGreaterThan(file.endMs - file.startMs, 19_000, "the file covers the 20 s recorded")
            XCTAssertEqual(files(receiver, channel: channel, uid: 42).count, 1, "one file, whole across the owner's death")
            XCTAssertTrue(receiver.allSignaturesValid)
            let path = cluster.recordingDirectory.appendingPathComponent(file.path).path
            XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int).map(UInt64.init), file.bytes)
            try assertPlayable(path, file)

            let queried = try await api.send("GET", "/v1/channels/\(channel)/recordings/\(id)")
            let queriedFiles = try XCTUnwrap(try queried.object()["files"] as? [[String: Any]], queried.text)
            XCTAssertEqual(queriedFiles.first?["path"] as? String, file.path)
            XCTAssertEqual(queriedFiles.first?["edge"] as? String, "edge-1")

            // The same through Agora Cloud Recording's acquire, start, query and stop.
            let app = "/v1/apps/\(TestApp.appID)/cloud_recording"
            let acquired = try await api.send("POST", "\(app)/acquire", json: ["cname": channel, "uid": "9999", "clientRequest": [String: Any]()])
            XCTAssertEqual(acquired.status, 200, acquired.text)
            let resource = try XCTUnwrap(try acquired.object()["resourceId"] as? String)
            let startBody: [String: Any] = ["cname": channel, "uid": "9999", "clientRequest": [
                "recordingConfig": ["channelType": 1, "subscribeVideoUids": ["42"], "subscribeAudioUids": ["42"]],
                "storageConfig": ["vendor": 1, "region": 0, "bucket": "b", "accessKey": "a", "secretKey": "s"],
            ]]
            let mixed = try await api.send("POST", "\(app)/resourceid/\(resource)/mode/mix/start", json: startBody)
            XCTAssertEqual(mixed.status, 400, mixed.text)
            let otherApp = try await api.send("POST", "/v1/apps/\(String(repeating: "0", count: 32))/cloud_recording/acquire",
                                              json: ["cname": channel, "uid": "9999"])
            XCTAssertEqual(otherApp.status, 401, otherApp.text)
            var wrongChannel = startBody
            wrongChannel["cname"] = "another-channel"
            let mismatched = try await api.send("POST", "\(app)/resourceid/\(resource)/mode/individual/start", json: wrongChannel)
            XCTAssertEqual(mismatched.status, 404, mismatched.text)
            let agoraStart = try await api.send("POST", "\(app)/resourceid/\(resource)/mode/individual/start", json: startBody)
            XCTAssertEqual(agoraStart.status, 200, agoraStart.text)
            let sid = try XCTUnwrap(try agoraStart.object()["sid"] as? String, agoraStart.text)
            let query = "\(app)/resourceid/\(resource)/sid/\(sid)/mode/individual/query"
            let running = try await api.send("GET", query)
            XCTAssertEqual((try running.object()["serverResponse"] as? [String: Any])?["status"] as? Int, 5, running.text)
            try await eventually("the edge records uid 42 again") {
                let got = try await api.send("GET", "/v1/channels/\(channel)/recordings/\(sid)")
                return (try got.object()["recording_uids"] as? [Int]) == [42]
            }
            let agoraStop = try await api.send("POST", "\(app)/resourceid/\(resource)/sid/\(sid)/mode/individual/stop",
                                               json: ["cname": channel, "uid": "9999", "clientRequest": ["async_stop": false]])
            XCTAssertEqual(agoraStop.status, 200, agoraStop.text)
            XCTAssertEqual((try agoraStop.object()["serverResponse"] as? [String: Any])?["uploadingStatus"] as? String, "uploaded")
            var fileList: [[String: Any]] = []
            try await eventually("query lists the file") {
                let got = try await api.send("GET", query)
                let response = try got.object()["serverResponse"] as? [String: Any]
                fileList = response?["fileList"] as? [[String: Any]] ?? []
                return response?["status"] as? Int == 7 && !fileList.isEmpty
            }
            XCTAssertEqual(fileList.first?["uid"] as? String, "42")
            XCTAssertEqual(fileList.first?["trackType"] as? String, "audio_and_video")
            XCTAssertEqual(fileList.first?["isPlayable"] as? Bool, true)
        } catch {
            XCTFail("\(error)")
        }
        await host.shutdown()
        await api.shutdown()
        cluster.down()
        await receiver.stop()
    }

    /// The recordings of `channel` in progress, as `GET /v1/recordings` lists them.
    private func inProgress(_ api: ServerAPIClient, channel: String) async throws -> [[String: Any]] {
        let list = try await api.send("GET", "/v1/recordings")
        return (try list.object()["recordings"] as? [[String: Any]] ?? []).filter { $0["channel"] as? String == channel }
    }

    /// The rules record a real 1v1 call (dialed through call-signal, split off a live show) on both
    /// sides and the rooms of the listed owners; during a PK the forwarded peer in a recorded
    /// room is recorded only when a recording names it.
    func testTheRulesRecordEveryCallOnBothSidesAndTheListedOwnersRoomsAndAPKPeerOnlyWhenAsked() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.webhookSecret)
        let cluster = try cluster(callsignals: 1, receiver: receiver, recordCalls: true, recordOwners: [55])
        let seeds = [try cluster.clientEndpoint(of: "coordinator-1")]
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let suffix = UInt32.random(in: 0 ... .max)
        // Host 77 is live; viewer 78 calls it, and the host pauses the show for the call.
        let show = "rec-show-77-\(suffix)"
        let callee = try await publisher(cluster, channel: show, uid: 77)
        var configuration = EngineConfiguration(entry: .seeds(seeds))
        configuration.media = LocalMediaConfiguration(videoBitrateKbps: 300, keyframeInterval: .seconds(2))
        let caller = try await ShowroomEngine(configuration: configuration)
        await caller.setLocalVideoSource(TestPatternCamera(width: 320, height: 240, framesPerSecond: 15))
        await caller.setLocalAudioSource(ToneMicrophone())
        var parties: ShowCallParties?
        var owners: [ShowroomEngine] = []
        do {
            let call = try await ShowCallParties.start(host: 77, callee, viewer: 78, caller, seeds: seeds,
                                                       live: ChannelConnection(channel: show, uid: 77))
            parties = call
            try await call.viewerCalls.call(remoteUserId: 77)
            try await call.viewerLog.wait("the caller connected") { if case .connected = $0 { true } else { false } }
            try await call.hostLog.wait("the callee connected") { if case .connected = $0 { true } else { false } }
            let channel = try XCTUnwrap(call.viewerCalls.currentCall?.channel)

            // Two rooms in a PK: owner 55's is recorded by the rule, owner 56's is not.
            var rooms: [UInt32: String] = [:]
            for owner: UInt32 in [55, 56] {
                let created = try await api.send("POST", "/v1/rooms", json: ["room_id": "rec-room-\(owner)-\(suffix)", "name": "show of \(owner)", "owner_uid": owner])
                XCTAssertEqual(created.status, 201, created.text)
                rooms[owner] = try XCTUnwrap(try created.object()["channel"] as? String, created.text)
                owners.append(try await publisher(cluster, channel: rooms[owner]!, uid: owner))
            }
            let pk = try await api.send("POST", "/v1/rooms/rec-room-55-\(suffix)/pk", json: ["peer_room_id": "rec-room-56-\(suffix)"])
            XCTAssertEqual(pk.status, 200, pk.text)
            try await eventually("owner 55's room is recorded") {
                try await inProgress(api, channel: rooms[55]!).contains { $0["uid"] as? Int == 55 }
            }
            try await eventually("both sides of the call are recorded") {
                Set(try await inProgress(api, channel: channel).compactMap { $0["uid"] as? Int }) == [77, 78]
            }
            // Host 56 is forwarded into 55's channel; the rule leaves it out, a recording naming it takes it.
            let named = try await api.send("POST", "/v1/channels/\(rooms[55]!)/recordings", json: ["uids": [56]])
            XCTAssertEqual(named.status, 201, named.text)
            let namedID = try XCTUnwrap(try named.object()["id"] as? String, named.text)
            try await eventually("the forwarded peer is recorded in 55's channel") {
                try await inProgress(api, channel: rooms[55]!).contains { $0["uid"] as? Int == 56 }
            }
            try await Task.sleep(for: .seconds(6))  // the length of the call and of the PK peer's recording
            let stopped = try await api.send("POST", "/v1/channels/\(rooms[55]!)/recordings/\(namedID)/stop")
            XCTAssertEqual(stopped.status, 200, stopped.text)
            try await call.viewerCalls.hangup(remoteUserId: 77, reason: "done")
            try await call.hostLog.wait("the callee's call ended") { if case .disconnected = $0 { true } else { false } }
            try await eventually("a file of each side of the call, and the PK peer's") {
                !files(receiver, channel: channel, uid: 77).isEmpty && !files(receiver, channel: channel, uid: 78).isEmpty
                    && !files(receiver, channel: rooms[55]!, uid: 56).isEmpty
            }
            for uid: UInt32 in [77, 78] {
                let file = try XCTUnwrap(files(receiver, channel: channel, uid: uid).first)
                XCTAssertEqual(file.recordingID, "rule-calls")
                XCTAssertGreaterThan(file.endMs - file.startMs, 4_000)
                try assertPlayable(cluster.recordingDirectory.appendingPathComponent(file.path).path, file)
            }
            let peer = files(receiver, channel: rooms[55]!, uid: 56)
            XCTAssertEqual(peer.map(\.recordingID), [namedID], "only the recording that names the PK peer records it")
            try assertPlayable(cluster.recordingDirectory.appendingPathComponent(peer[0].path).path, peer[0])

            for owner in owners { try await owner.leaveChannel() }
            try await eventually("owner 55's file") { !files(receiver, channel: rooms[55]!, uid: 55).isEmpty }
            let file = try XCTUnwrap(files(receiver, channel: rooms[55]!, uid: 55).first)
            XCTAssertTrue(file.recordingID.hasPrefix("rule-room-"), file.recordingID)
            try assertPlayable(cluster.recordingDirectory.appendingPathComponent(file.path).path, file)
            XCTAssertEqual(files(receiver, channel: rooms[55]!, uid: 56).count, 1, "the rule never recorded the forwarded peer")
            XCTAssertTrue(files(receiver, channel: rooms[56]!, uid: 56).isEmpty, "owner 56's room is not recorded")
            XCTAssertTrue(receiver.events(channel: show).filter { $0.type == .recordingFile }.isEmpty, "the paused show is not recorded")
            XCTAssertFalse(FileManager.default.fileExists(atPath: cluster.recordingDirectory.appendingPathComponent(rooms[56]!).path))
        } catch {
            XCTFail("\(error)")
        }
        parties?.stop()
        for owner in owners { await owner.shutdown() }
        await caller.shutdown()
        await callee.shutdown()
        await api.shutdown()
        cluster.down()
        await receiver.stop()
    }

    /// A recording follows its publisher: across a drain with no gap over 1 s, then across a
    /// failover (the edge SIGKILLed, its file readable up to the kill) in a new file on the third edge.
    func testARecordingFollowsItsPublisherAcrossADrainAndAFailoverAndSurvivesTheKill() async throws {
        let receiver = try await WebhookReceiver.start(secret: Self.webhookSecret)
        let cluster = try cluster(edges: 3, receiver: receiver)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let channel = "rec-drain-\(UInt32.random(in: 0 ... .max))"
        let host = try await publisher(cluster, channel: channel, uid: 42)
        do {
            let started = try await api.send("POST", "/v1/channels/\(channel)/recordings", json: ["uids": [42]])
            XCTAssertEqual(started.status, 201, started.text)
            let id = try XCTUnwrap(try started.object()["id"] as? String, started.text)
            var first = ""
            try await eventually("an edge records uid 42") {
                first = try await inProgress(api, channel: channel).first?["edge"] as? String ?? ""
                return !first.isEmpty
            }
            try await Task.sleep(for: .seconds(4))  // a stretch recorded on the first edge
            try cluster.terminate(first)  // a drain: the host moves to another edge
            var second = ""
            try await eventually("the recording goes on on another edge", timeout: .seconds(20)) {
                second = try await inProgress(api, channel: channel).first { $0["edge"] as? String != first }?["edge"] as? String ?? ""
                return !second.isEmpty
            }
            try await eventually("the first edge's file is finished") {
                files(receiver, channel: channel, uid: 42).contains { !$0.path.isEmpty }
            }
            let drained = try XCTUnwrap(files(receiver, channel: channel, uid: 42).first)
            try assertPlayable(cluster.recordingDirectory.appendingPathComponent(drained.path).path, drained)

            // On the second edge the recording runs on; it is killed mid-file, with no chance to finish it.
            try await Task.sleep(for: .seconds(4))
            let killedAt = Int64(Date().timeIntervalSince1970 * 1000)
            try cluster.kill(second)
            let directory = cluster.recordingDirectory.appendingPathComponent("\(channel)/42")
            func startMs(of name: String) -> Int64 { Int64(name.split(separator: "-").first.flatMap { Int64($0) } ?? 0) }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".webm") }
            let cut = try XCTUnwrap(names.first { startMs(of: $0) < killedAt && directory.appendingPathComponent($0).path != cluster.recordingDirectory.appendingPathComponent(drained.path).path },
                                    "the second edge's file, in \(names)")
            let probe = try FFmpegTools.probe(directory.appendingPathComponent(cut).path)
            XCTAssertEqual(probe.codec("video"), "vp8")
            XCTAssertEqual(try FFmpegTools.decodeErrors(directory.appendingPathComponent(cut).path), "", "the killed file decodes to its last cluster")
            let times = probe.packetTimes("video")
            XCTAssertGreaterThan(times.last ?? 0, 2.0, "the killed file holds what was recorded up to about a second before the kill")
            // No gap between the drained edges' files: the second began before the first ended (make before break) or within 1 s.
            XCTAssertLessThan(startMs(of: cut) - drained.endMs, 1_000, "the gap between the segments")

            // The failover: the host rejoins on the third edge, and the recording goes on there in a new file.
            let third = try XCTUnwrap(["edge-1", "edge-2", "edge-3"].first { $0 != first && $0 != second })
            try await eventually("the recording goes on on \(third)", timeout: .seconds(20)) {
                try await inProgress(api, channel: channel).contains { $0["edge"] as? String == third }
            }
            try await Task.sleep(for: .seconds(3))  // a stretch recorded on the third edge
            let stopped = try await api.send("POST", "/v1/channels/\(channel)/recordings/\(id)/stop")
            XCTAssertEqual(stopped.status, 200, stopped.text)
            try await eventually("the third edge's file is finished") {
                files(receiver, channel: channel, uid: 42).contains { $0.startMs > killedAt }
            }
            let afterFailover = try XCTUnwrap(files(receiver, channel: channel, uid: 42).first { $0.startMs > killedAt })
            XCTAssertGreaterThan(afterFailover.endMs - afterFailover.startMs, 2_000)
            try assertPlayable(cluster.recordingDirectory.appendingPathComponent(afterFailover.path).path, afterFailover)
        } catch {
            XCTFail("\(error)")
        }
        await host.shutdown()
        await api.shutdown()
        cluster.down()
        await receiver.stop()
    }

    func testAFullDiskFailsTheRecordingWithItsReasonAndTheViewersSeeNothing() async throws {
        let disk = FileManager.default.temporaryDirectory.appendingPathComponent("recording-full-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let mount = try FFmpegTools.run("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk.path], deadline: 10)
        XCTAssertEqual(mount.status, 0, "a 256 KiB tmpfs for the full disk (the tests run as root): \(mount.errors)")
        guard mount.status == 0 else { return }
        defer {
            _ = try? FFmpegTools.run("umount", [disk.path], deadline: 10)
            try? FileManager.default.removeItem(at: disk)
        }
        let receiver = try await WebhookReceiver.start(secret: Self.webhookSecret)
        let cluster = try cluster(receiver: receiver, recordingDirectories: ["edge-1": disk.path])
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let channel = "rec-full-\(UInt32.random(in: 0 ... .max))"
        let host = try await publisher(cluster, channel: channel, uid: 42)
        let frames = DecodingVideoSink()
        var configuration = EngineConfiguration(entry: .seeds([try cluster.clientEndpoint(of: "coordinator-1")]))
        configuration.media = LocalMediaConfiguration()
        let viewer = try await ShowroomEngine(configuration: configuration)
        do {
            try await viewer.setupRemoteVideo(uid: 42, connection: ChannelConnection(channel: channel, uid: 43), sink: frames)
            _ = try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 43, role: .subscriber),
                                             channel: channel, uid: 43, options: .audience)
            try await eventually("the viewer decodes the host") { frames.statistics.framesDecoded > 0 }
            let started = try await api.send("POST", "/v1/channels/\(channel)/recordings", json: [String: Any]())
            XCTAssertEqual(started.status, 201, started.text)
            try await eventually("the recording fails for the full disk", timeout: .seconds(30)) {
                receiver.events(channel: channel).contains { $0.type == .recordingFailed && $0.uid == 42 }
            }
            let failure = try XCTUnwrap(receiver.events(channel: channel).first { $0.type == .recordingFailed })
            XCTAssertFalse(failure.recording.failure.isEmpty, "the reason is given")
            let cutShort = receiver.events(channel: channel).first { $0.type == .recordingFile }
            XCTAssertEqual(cutShort.map { !$0.recording.failure.isEmpty }, true, "the file cut short names the failure")
            // The show goes on: the viewer keeps decoding after the failure.
            let before = frames.statistics.framesDecoded
            try await eventually("the viewer decodes on") { frames.statistics.framesDecoded >= before + 30 }
            XCTAssertEqual(frames.statistics.decodeErrors, 0)
            XCTAssertEqual(frames.statistics.counterRegressions, 0)
            let got = try await api.send("GET", "/v1/channels/\(channel)/recordings")
            let recordings = try XCTUnwrap(try got.object()["recordings"] as? [[String: Any]], got.text)
            let reported = recordings.first?["files"] as? [[String: Any]] ?? []
            XCTAssertTrue(reported.contains { !($0["failure"] as? String ?? "").isEmpty }, got.text)
        } catch {
            XCTFail("\(error)")
        }
        await viewer.shutdown()
        await host.shutdown()
        await api.shutdown()
        cluster.down()
        await receiver.stop()
    }
}
