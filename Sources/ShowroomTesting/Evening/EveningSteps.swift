import Foundation
import ShowroomKit
import Synchronization

/// Everyone on stage and in the audience, joined the way apps join (the seeds' order: tokens from
/// the business server, join, sinks once a broadcaster is announced).
final class Cast: Sendable {
    let hosts: [EveningHost]
    let viewers: [[EveningViewer]]
    let swipers: [EveningSwiper]
    let rooms: RoomService
    let loops: [EngineLoop]
    let anchors: [[AnchorInfo]]
    private let channels: [String: Int]

    private init(hosts: [EveningHost], viewers: [[EveningViewer]],
                 swipers: [EveningSwiper],
                 rooms: RoomService, loops: [EngineLoop], anchors: [[AnchorInfo]]) {
        self.hosts = hosts
        self.viewers = viewers
        self.swipers = swipers
        self.rooms = rooms
        self.loops = loops
        self.anchors = anchors
        channels = Dictionary(uniqueKeysWithValues: hosts.map { ($0.live.channel, $0.room) })
    }

    /// The room whose channel is `channel`.
    func room(of channel: String) -> Int? { channels[channel] }

    static func assemble(_ evening: Evening) async throws -> Cast {
        let settings = evening.schedule.settings
        let seeds = evening.seeds
        let tokens = evening.tokens
        let loops = try (0..<max(2, settings.rooms)).map { try EngineLoop(name: "evening-\($0)") }
        let rooms = RoomService(seeds: seeds, loop: loops[0])
        func engine(_ room: Int) async throws -> ShowroomEngine {
            try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(seeds)), loop: loops[room % loops.count])
        }
        var hosts: [EveningHost] = []
        for room in 0..<settings.rooms {
            let roomID = evening.roomID(room), uid = evening.hostUID(room)
            _ = try await rooms.createRoom(name: "Evening show \(room)", ownerUid: uid, ownerName: "host-\(room)", roomID: roomID, seats: 2)
            let host = try await engine(room)
            await host.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15))
            await host.setLocalAudioSource(ToneMicrophone())
            let live = try await host.joinChannel(token: try tokens.rtc(roomID, uid, true), channel: roomID, uid: uid, options: .broadcaster)
            let calls = CallClient(uid: uid, engine: host, seeds: seeds)
            try await calls.login(token: try tokens.login(uid))
            try await calls.prepareForCall(PrepareConfig(pausesConnection: live))
            hosts.append(EveningHost(room: room, roomID: roomID, uid: uid, engine: host, live: live, calls: calls))
        }
        var viewers: [[EveningViewer]] = []
        for room in 0..<settings.rooms {
            var audience: [EveningViewer] = []
            let roomID = evening.roomID(room)
            for index in 0..<settings.viewersPerRoom {
                let uid = evening.viewerUID(room, index)
                let engine = try await engine(room)
                let watching = WatchingEngine(engine: engine, uid: uid)
                // The first two may go on stage: they have a camera, used only when they publish.
                if index < 2 { await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15)) }
                let connection = try await engine.joinChannel(token: try tokens.rtc(roomID, uid, false), channel: roomID, uid: uid, options: .audience)
                // Each viewer's app follows its room with a room service of its own, as apps do.
                let service = RoomService(seeds: seeds, loop: loops[room % loops.count])
                _ = try? await service.joinRoom(roomID, uid: uid, userName: "viewer-\(uid)")
                var calls: CallClient?
                if index == 0 {
                    let client = CallClient(uid: uid, engine: engine, seeds: seeds)
                    try await client.login(token: try tokens.login(uid))
                    try await client.prepareForCall(PrepareConfig(callTimeout: .seconds(3)))
                    calls = client
                }
                let viewer = EveningViewer(room: room, index: index, watching: watching, calls: calls, rooms: service)
                var tasks = [service.followPK(roomID: roomID, engine: engine, uid: uid) { channel in try tokens.rtc(channel, uid, false) }]
                if index < 2 {
                    tasks.append(service.followSeat(roomID: roomID, engine: engine, connection: connection) { onStage, seat in
                        viewer.seat.withLock { $0 = onStage ? seat : nil }
                    } onRefused: { _, error in
                        viewer.stageRefusal.withLock { $0 = error }
                    })
                }
                viewer.tasks.withLock { $0 += tasks }
                audience.append(viewer)
            }
            viewers.append(audience)
        }
        var swipers: [EveningSwiper] = []
        var anchors: [[AnchorInfo]] = []
        for swiper in 0..<settings.swipers {
            let uid = evening.swiperUID(swiper)
            let engine = try await engine(swiper)
            let loader = VideoLoader(engine: engine, localUID: uid)
            swipers.append(EveningSwiper(engine: engine, loader: loader, uid: uid))
            anchors.append(try hosts.map { AnchorInfo(channel: $0.live.channel, uid: $0.uid, token: try tokens.rtc($0.live.channel, uid, false)) })
        }
        let cast = Cast(hosts: hosts, viewers: viewers, swipers: swipers, rooms: rooms, loops: loops, anchors: anchors)
        try await eventually("every viewer decodes its host", timeout: .seconds(20)) {
            cast.viewers.joined().allSatisfy { viewer in
                let host = cast.hosts[viewer.room]
                return viewer.watching.sightings.last(channel: host.live.channel, uid: host.uid) != nil
            }
        }
        return cast
    }

    /// Everyone leaves: viewers and swipers, then the hosts close their rooms and log out.
    func leave(_ evening: Evening) async {
        for viewer in viewers.joined() {
            viewer.stop()
            if let calls = viewer.calls {
                await calls.logout()
                await calls.close()
            }
            _ = try? await viewer.rooms.leaveRoom(hosts[viewer.room].roomID, uid: viewer.uid)
            await viewer.rooms.shutdown()
            await viewer.engine.shutdown()
        }
        for swiper in swipers {
            swiper.stop()
            swiper.loader.cleanCache()
            await swiper.engine.shutdown()
        }
        for host in hosts {
            host.stop()
            await host.calls.logout()
            await host.calls.close()
            _ = try? await rooms.closeRoom(host.roomID, uid: host.uid)
            await host.engine.shutdown()
        }
        await rooms.shutdown()
        for loop in loops { await loop.shutdown() }
    }
}

/// A viewer swiping from room to room on a video loader feed.
final class EveningSwiper: Sendable {
    let engine: ShowroomEngine
    let loader: VideoLoader
    let uid: UInt32
    /// The channels whose first frame the loader reported, in order.
    let firstFrames = Mutex<[String]>([])
    /// What the loader and the engine reported: a swipe that showed nothing quotes it.
    let diary = Diary()
    let readers: Mutex<[Task<Void, Never>]> = Mutex([])

    init(engine: ShowroomEngine, loader: VideoLoader, uid: UInt32) {
        self.engine = engine
        self.loader = loader
        self.uid = uid
        let diary = self.diary
        let loaderTask = Task { [self] in
            for await event in loader.events {
                switch event {
                case .firstFrame(let channel, _, let actual, _):
                    firstFrames.withLock { $0.append(channel) }
                    diary.note("\(channel) first frame after \(actual.milliseconds) ms")
                case .error(let channel, let error):
                    diary.note("\(channel) loader error \(error)")
                }
            }
        }
        readers.withLock { $0 = [loaderTask, diary.listen(to: engine)] }
    }

    func stop() { readers.withLock { $0.forEach { $0.cancel() } } }
}

// MARK: - The steps

extension Evening {
    func perform(_ step: EveningStep, _ cast: Cast) async {
        let end = ContinuousClock.now + step.length
        switch step.action {
        case .call(let room, let outcome):
            await call(room: room, outcome, until: end, cast)
        case .pk(let room, let peer, let subscribe, let outcome):
            await pk(room, peer, subscribe: subscribe, outcome, until: end, cast)
        case .coHost(let room, let extra, let outcome):
            await coHost(room: room, extra: extra, outcome, until: end, cast)
        case .swipe(let swiper, let from, let count):
            await swipe(cast.swipers[swiper], anchors: cast.anchors[swiper], from: from, count: count)
        case .chat(let room, let messages):
            await chat(room: room, messages: messages, cast)
        case .operation(let operation):
            await operations.run { await self.operate(operation, cast) }
        }
    }

    private func waitFor(_ timeout: Duration, _ condition: @escaping @Sendable () async throws -> Bool) async -> Bool {
        (try? await eventually("a step's outcome", timeout: timeout, condition)) != nil
    }

    // A viewer of the room calls its host.
    func call(room: Int, _ outcome: EveningCallOutcome, until end: ContinuousClock.Instant, _ cast: Cast) async {
        let host = cast.hosts[room]
        let caller = cast.viewers[room][0]
        guard let calls = caller.calls else { return }
        let accepted = outcome == .hungUpByCaller || outcome == .hungUpByCallee
        host.answer.withLock { $0 = accepted ? .accept : outcome == .rejected ? .reject : .ignore }
        host.callWindow.withLock { $0 = (nil, nil) }
        caller.callLog.withLock { $0 = [] }
        if accepted { watch.withLock { $0.paused[room, default: 0] += 1 } }
        defer {
            if accepted {
                watch.withLock { watch in
                    watch.paused[room]! -= 1
                    if watch.paused[room] == 0 { watch.paused[room] = nil }
                    watch.steadySince[room] = .now
                }
            }
            host.answer.withLock { $0 = .ignore }
        }
        do {
            try await calls.call(remoteUserId: host.uid)
        } catch {
            return step(false, "room \(room): viewer \(caller.uid) could not call host \(host.uid): \(error)")
        }
        @Sendable func callerBack() -> Bool {
            caller.callLog.withLock { log in
                log.contains { if case .stateChanged(.prepared, _, _, _) = $0 { true } else { false } }
                    || log.contains { if case .disconnected = $0 { true } else { false } }
            }
        }
        switch outcome {
        case .hungUpByCaller, .hungUpByCallee:
            let connected = await waitFor(.seconds(8)) {
                host.callWindow.withLock { $0.connected != nil }
                    && caller.callLog.withLock { $0.contains { if case .connected = $0 { true } else { false } } }
            }
            step(connected, "room \(room): the accepted call of viewer \(caller.uid) to host \(host.uid) did not connect on both sides")
            try? await Task.sleep(until: end)
            if outcome == .hungUpByCaller {
                try? await calls.hangup(remoteUserId: host.uid, reason: "bye")
            } else {
                try? await host.calls.hangup(remoteUserId: caller.uid, reason: "bye")
            }
            let ended = await waitFor(.seconds(5)) { host.callWindow.withLock { $0.ended != nil } && callerBack() }
            step(ended, "room \(room): the call of viewer \(caller.uid) did not end on both sides after the hang-up")
        case .rejected, .timedOut:
            let back = await waitFor(.seconds(8), callerBack)
            step(back, "room \(room): the \(outcome.rawValue) call of viewer \(caller.uid) did not end for the caller")
            step(host.callWindow.withLock { $0.connected == nil }, "room \(room): a \(outcome.rawValue) call connected")
        case .cancelledWhileRinging:
            try? await Task.sleep(for: .milliseconds(400))
            try? await calls.cancelCall()
            let back = await waitFor(.seconds(5), callerBack)
            step(back, "room \(room): the cancelled call of viewer \(caller.uid) did not end for the caller")
        }
    }

    // Two hosts in a PK.
    func pk(_ a: Int, _ b: Int, subscribe: Bool, _ outcome: EveningPKOutcome, until end: ContinuousClock.Instant, _ cast: Cast) async {
        let (hostA, hostB) = (cast.hosts[a], cast.hosts[b])
        let rooms = cast.rooms
        let mode: PK.MediaMode = subscribe ? .subscribe : .forward
        let from = ContinuousClock.now
        // The audiences may see the peer host from now until the PK has ended.
        watch.withLock { watch in
            watch.allowed[a, default: []].append((hostB.uid, from, nil))
            watch.allowed[b, default: []].append((hostA.uid, from, nil))
        }
        defer {
            let until = ContinuousClock.now
            watch.withLock { watch in
                for (room, uid) in [(a, hostB.uid), (b, hostA.uid)] {
                    if let index = watch.allowed[room]?.lastIndex(where: { $0.uid == uid && $0.from == from }) { watch.allowed[room]![index].until = until }
                }
            }
        }
        do throws(ShowroomError) {
            let tokenA = try tokenOrFail(hostA.roomID, hostA.uid), tokenB = try tokenOrFail(hostB.roomID, hostB.uid)
            var pkID: String?
            switch outcome {
            case .stoppedByInviter, .stoppedByInvitee, .rejected, .cancelled, .durationEnded:
                let invitation = try await rooms.invitePK(roomID: hostA.roomID, uid: hostA.uid, token: tokenA, peerRoomID: hostB.roomID,
                                                          durationSeconds: outcome == .durationEnded ? 3 : 0, mediaMode: mode)
                switch outcome {
                case .rejected:
                    _ = try await rooms.rejectPK(roomID: hostB.roomID, uid: hostB.uid, token: tokenB, invitationID: invitation.id)
                case .cancelled:
                    _ = try await rooms.cancelPKInvitation(roomID: hostA.roomID, uid: hostA.uid, token: tokenA, invitationID: invitation.id)
                default:
                    let room = try await rooms.acceptPK(roomID: hostB.roomID, uid: hostB.uid, token: tokenB, invitationID: invitation.id)
                    if case .pk(let held) = room.interaction { pkID = held.id }
                }
            case .crossInvited:
                async let one = rooms.invitePK(roomID: hostA.roomID, uid: hostA.uid, token: tokenA, peerRoomID: hostB.roomID, mediaMode: mode)
                async let two = rooms.invitePK(roomID: hostB.roomID, uid: hostB.uid, token: tokenB, peerRoomID: hostA.roomID, mediaMode: mode)
                _ = try? await (one, two)
            case .matched:
                async let one = rooms.matchPK(roomID: hostA.roomID, uid: hostA.uid, token: tokenA)
                async let two = rooms.matchPK(roomID: hostB.roomID, uid: hostB.uid, token: tokenB)
                _ = try? await (one, two)
            }
            let started = outcome != .rejected && outcome != .cancelled
            if started {
                let held = Mutex<String?>(nil)
                let inPK = await waitFor(.seconds(6)) {
                    let roomA = try await rooms.room(hostA.roomID), roomB = try await rooms.room(hostB.roomID)
                    guard case .pk(let pkA) = roomA.interaction, case .pk(let pkB) = roomB.interaction, pkA.id == pkB.id else { return false }
                    held.withLock { $0 = pkA.id }
                    return true
                }
                step(inPK, "rooms \(a) and \(b): the \(outcome.rawValue) PK did not start in both rooms")
                pkID = pkID ?? held.withLock { $0 }
                // A random match is always forwarded (the cluster pairs the rooms, nobody picks a mode).
                let subscribed = subscribe && outcome != .matched
                let peerSeen = await waitFor(.seconds(6)) {
                    cast.viewers[a].allSatisfy { viewer in
                        viewer.watching.sightings.last(channel: subscribed ? hostB.live.channel : hostA.live.channel, uid: hostB.uid).map { $0 > from } ?? false
                    }
                }
                step(peerSeen, "room \(a)'s audience did not decode peer host \(hostB.uid) during the \(subscribed ? "subscribed" : "forwarded") PK")
                try? await Task.sleep(until: end)
                if outcome != .durationEnded, let pkID {
                    let (room, uid, token) = outcome == .stoppedByInvitee ? (hostB.roomID, hostB.uid, tokenB) : (hostA.roomID, hostA.uid, tokenA)
                    _ = try await rooms.stopPK(roomID: room, uid: uid, token: token, pkID: pkID)
                }
            }
            let idle = await waitFor(.seconds(started ? 8 : 4)) {
                let roomA = try await rooms.room(hostA.roomID), roomB = try await rooms.room(hostB.roomID)
                return roomA.interaction == .idle && roomB.interaction == .idle
            }
            step(idle, "rooms \(a) and \(b) are not idle after the \(outcome.rawValue) PK")
        } catch {
            step(false, "rooms \(a) and \(b): the \(outcome.rawValue) PK was refused: \(error)")
        }
    }

    func tokenOrFail(_ channel: String, _ uid: UInt32, publisher: Bool = true) throws(ShowroomError) -> String {
        do { return try tokens.rtc(channel, uid, publisher) } catch { throw .invalidArgument("no token: \(error)") }
    }

    // A viewer (and maybe a second) on a co-host seat.
    func coHost(room: Int, extra: Int, _ outcome: EveningCoHostOutcome, until end: ContinuousClock.Instant, _ cast: Cast) async {
        let host = cast.hosts[room]
        let seated = Array(cast.viewers[room].prefix(1 + extra))
        let rooms = cast.rooms
        let from = ContinuousClock.now
        watch.withLock { watch in
            for viewer in seated { watch.allowed[room, default: []].append((viewer.uid, from, nil)) }
        }
        defer {
            let until = ContinuousClock.now
            watch.withLock { watch in
                for viewer in seated {
                    if let index = watch.allowed[room]?.lastIndex(where: { $0.uid == viewer.uid && $0.from == from }) { watch.allowed[room]![index].until = until }
                }
            }
        }
        do throws(ShowroomError) {
            let hostToken = try tokenOrFail(host.roomID, host.uid)
            for viewer in seated {
                viewer.stageRefusal.withLock { $0 = nil }
                let token = try tokenOrFail(host.roomID, viewer.uid, publisher: false)
                if outcome == .invitedStoppedByHost {
                    let invitation = try await rooms.inviteCoHost(roomID: host.roomID, uid: host.uid, token: hostToken, inviteeUid: viewer.uid)
                    _ = try await rooms.answerCoHostRequest(roomID: host.roomID, uid: viewer.uid, token: token, requestID: invitation.id, accept: true)
                } else {
                    let application = try await rooms.applyForCoHosting(roomID: host.roomID, uid: viewer.uid, token: token, userName: "viewer-\(viewer.uid)")
                    _ = try await rooms.answerCoHostRequest(roomID: host.roomID, uid: host.uid, token: hostToken, requestID: application.id,
                                                            accept: outcome != .appliedRejected)
                }
            }
            if outcome == .appliedRejected {
                try? await Task.sleep(for: .seconds(1))
                step(seated.allSatisfy { $0.seat.withLock { $0 } == nil }, "room \(room): a rejected applicant went on stage")
                return
            }
            for viewer in seated {
                let onStage = await waitFor(.seconds(8)) { viewer.seat.withLock { $0 } != nil }
                step(onStage, "room \(room): viewer \(viewer.uid) was seated but did not go on stage\(viewer.stageRefusal.withLock { $0 }.map { ": \($0)" } ?? "")")
                if onStage, let other = cast.viewers[room].first(where: { !seated.contains { $0 === viewer } && $0 !== viewer }) ?? Optional(cast.viewers[room][0]),
                   other !== viewer {
                    let seen = await waitFor(.seconds(5)) {
                        other.watching.sightings.last(channel: host.live.channel, uid: viewer.uid).map { $0 > from } ?? false
                    }
                    step(seen, "room \(room): viewer \(other.uid) did not decode co-host \(viewer.uid)")
                }
            }
            try? await Task.sleep(until: end)
            for viewer in seated {
                guard let seat = viewer.seat.withLock({ $0 }) else { continue }
                if outcome == .appliedSteppedDown {
                    _ = try await rooms.stopCoHosting(roomID: host.roomID, uid: viewer.uid, token: try tokenOrFail(host.roomID, viewer.uid, publisher: false), seatID: seat.id)
                } else {
                    _ = try await rooms.stopCoHosting(roomID: host.roomID, uid: host.uid, token: hostToken, seatID: seat.id)
                }
            }
            let off = await waitFor(.seconds(6)) { seated.allSatisfy { $0.seat.withLock { $0 } == nil } }
            step(off, "room \(room): a co-host did not step down when its seat ended")
        } catch {
            step(false, "room \(room): the co-host step (\(outcome.rawValue)) was refused: \(error)")
            // Whoever got a seat gives it up, so the room is free for what comes next.
            for viewer in seated {
                if let seat = viewer.seat.withLock({ $0 }), let token = try? tokenOrFail(host.roomID, host.uid) {
                    _ = try? await rooms.stopCoHosting(roomID: host.roomID, uid: host.uid, token: token, seatID: seat.id)
                }
            }
        }
    }

    // A swiping viewer goes through rooms with the video loader.
    func swipe(_ swiper: EveningSwiper,
               anchors: [AnchorInfo], from: Int, count: Int) async {
        for offset in 0..<count {
            let index = (from + offset) % anchors.count
            let before = swiper.firstFrames.withLock { $0.count }
            let pausedBefore = watch.withLock { $0.paused[index] != nil }
            swiper.loader.swipe(to: index, in: anchors)
            let shown = await waitFor(.seconds(3)) {
                swiper.firstFrames.withLock { $0[before...].contains(anchors[index].channel) }
            }
            // A room it was still showing gives no new first frame: it showed already. A host in
            // a call shows nothing: the show is paused.
            let already = swiper.firstFrames.withLock { $0.last == anchors[index].channel }
            let paused = pausedBefore || watch.withLock { $0.paused[index] != nil || ($0.steadySince[index].map { $0 > .now - .seconds(4) } ?? false) }
            step(shown || already || paused,
                 "swiper \(swiper.uid) swiped to room \(index) and saw no first frame within 3 s; it heard: \(swiper.diary.recent(.seconds(4)))")
            try? await Task.sleep(for: .milliseconds(300))
        }
    }

    func chat(room: Int, messages: Int, _ cast: Cast) async {
        let viewer = cast.viewers[room].last!
        let roomID = cast.hosts[room].roomID
        for number in 0..<messages {
            let text = "message \(number) from \(viewer.uid)"
            let sent = (try? await cast.rooms.sendMessage(roomID, uid: viewer.uid, userName: "viewer-\(viewer.uid)", text: text)) != nil
            step(sent, "room \(room): viewer \(viewer.uid) could not chat")
        }
        let history = (try? await cast.rooms.messages(in: roomID, limit: 50)) ?? []
        step(history.contains { $0.text == "message \(messages - 1) from \(viewer.uid)" }, "room \(room): the chat history lacks the last message")
    }

    // Taking processes away, alone (the schedule runs nothing else meanwhile).
    func operate(_ operation: EveningOperation, _ cast: Cast) async {
        let started = ContinuousClock.now
        watch.withLock { $0.statusQuietUntil = .now + .seconds(60) }
        defer { watch.withLock { $0.statusQuietUntil = .now + .seconds(6) } }
        do {
            let edges = try await cluster.memberIDs(role: "edge")
            // The edge of the first room's host: an edge that surely has clients.
            let busy = await cast.hosts[0].engine.edgeID(of: cast.hosts[0].live)
            let victim = busy.flatMap { edges.contains($0) ? $0 : nil } ?? edges.first
            switch operation {
            case .drainEdge:
                guard let victim, edges.count >= 2 else { return step(true, "") }
                try await cluster.drainNode(victim)
                try await cluster.scale(edges: edges.count)
            case .killEdge:
                guard let victim, edges.count >= 2 else { return step(true, "") }
                watch.withLock { $0.killedAt = .now }
                try await cluster.killNode(victim)
                try await cluster.scale(edges: edges.count)
            case .scaleEdgesUpAndDown:
                try await cluster.scale(edges: edges.count + 1)
                try await cluster.scale(edges: edges.count)
            case .killCoordinator, .killCallSignal:
                let ids = try await cluster.memberIDs(role: operation == .killCoordinator ? "coordinator" : "callsignal")
                guard let target = ids.last else { return step(true, "") }
                try await cluster.killNode(target)
                try await cluster.startNode(target)
            }
            report("operation \(operation.rawValue) done in \(started.duration(to: .now))")
            step(true, "")
        } catch {
            step(false, "operation \(operation.rawValue) failed: \(error)")
        }
    }
}
