import Edge
import ShowroomWire
import XCTest

/// The frame path: fan-out, the GOP cache, congestion, keyframe requests, mute and subscriptions.
final class ForwardingTests: XCTestCase {
    /// A host publishing in "room", with `viewers` audience members already watching.
    private func room(viewers: [SessionID], settings: EdgeSettings = EdgeSettings()) -> TestEdge {
        var edge = TestEdge(settings: settings)
        edge.open(host)
        edge.join(host, "room", uid: 100, as: .broadcaster)
        for (i, viewer) in viewers.enumerated() {
            edge.open(viewer)
            edge.join(viewer, "room", uid: UInt32(i + 1), as: .audience)
        }
        return edge
    }

    func testSubscriberJoiningMidGOPGetsTheKeyframeAndDeltasAtOnceThenLiveFramesInOrder() {
        var edge = room(viewers: [viewer1])
        edge.publish(host, "room", uid: 100, .video, key: true)
        for _ in 2...4 { edge.publish(host, "room", uid: 100, .video) }
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.cachedFrames, 4)

        edge.open(viewer2)
        let join = edge.join(viewer2, "room", uid: 2, as: .audience)
        // Before any further frame: the whole GOP, keyframe first, and the subscriber is decoding.
        XCTAssertEqual(edge.frames(to: viewer2).map(\.description), ["v100#1K", "v100#2", "v100#3", "v100#4"])
        XCTAssertEqual(join.events(to: viewer2).suffix(2), [
            .remoteVideoStateChanged(video("room", 100), state: .starting, reason: .subscribed),
            .remoteVideoStateChanged(video("room", 100), state: .decoding, reason: .subscribed),
        ])
        XCTAssertTrue(join.contains(.sendCachedFrames(video("room", 100), to: viewer2)))
        XCTAssertEqual(join.keyframeRequests, [], "the cache made a keyframe request unnecessary")

        edge.publish(host, "room", uid: 100, .video)
        edge.publish(host, "room", uid: 100, .video, key: true)
        edge.publish(host, "room", uid: 100, .video)
        XCTAssertEqual(edge.frames(to: viewer2).map(\.number), Array(1...7))
        XCTAssertEqual(edge.frames(to: viewer1).map(\.number), Array(1...7))
        XCTAssertEqual(edge.plane.statistics.cachedFramesDelivered, 4)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.cachedFrames, 2, "cleared at the keyframe")
    }

    func testSubscriberWithoutACachedGOPWaitsForTheNextKeyframe() {
        var edge = room(viewers: [viewer1])
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.awaitingKeyframe, [viewer1])
        let deltas = edge.publish(host, "room", uid: 100, .video)
        XCTAssertEqual(edge.frames(to: viewer1), [], "a delta without its keyframe is useless")
        XCTAssertEqual(deltas.events, [])
        let key = edge.publish(host, "room", uid: 100, .video, key: true)
        XCTAssertEqual(edge.frames(to: viewer1).map(\.number), [2])
        XCTAssertEqual(key.events(to: viewer1), [.remoteVideoStateChanged(video("room", 100), state: .decoding, reason: .subscribed)])
        XCTAssertEqual(edge.plane.statistics.framesSkipped, 1)
    }

    func testCongestedSubscriberSkipsDeltasUntilTheNextKeyframeWhileOthersGetEveryFrame() {
        var edge = room(viewers: [viewer1, viewer2, viewer3])
        edge.publish(host, "room", uid: 100, .video, key: true)
        edge.publish(host, "room", uid: 100, .video)
        edge.now += .seconds(1)

        edge.blocked = [viewer2]
        let congested = edge.publish(host, "room", uid: 100, .video)
        XCTAssertEqual(congested.events(to: viewer2), [
            .remoteVideoStateChanged(video("room", 100), state: .frozen, reason: .networkCongestion),
        ])
        XCTAssertEqual(congested, [
            .send(.remoteVideoStateChanged(video("room", 100), state: .frozen, reason: .networkCongestion), to: viewer2),
            .requestKeyframe(video("room", 100), from: host),
        ])

        // The queue drains, but deltas would not decode: skipped until the keyframe.
        edge.blocked = []
        edge.publish(host, "room", uid: 100, .video)
        edge.publish(host, "room", uid: 100, .video)
        let recovered = edge.publish(host, "room", uid: 100, .video, key: true)
        XCTAssertEqual(recovered.events(to: viewer2), [
            .remoteVideoStateChanged(video("room", 100), state: .decoding, reason: .networkRecovery),
        ])
        edge.publish(host, "room", uid: 100, .video)

        XCTAssertEqual(edge.frames(to: viewer2).map(\.number), [1, 2, 6, 7])
        XCTAssertEqual(edge.frames(to: viewer1).map(\.number), Array(1...7))
        XCTAssertEqual(edge.frames(to: viewer3).map(\.number), Array(1...7))
        XCTAssertEqual(edge.plane.statistics.framesDropped, 1)
        XCTAssertEqual(edge.plane.statistics.framesSkipped, 2)
    }

    func testKeyframeRequestsAreRateLimitedPerTrackAndRepeatedUntilAnswered() {
        var settings = EdgeSettings()
        settings.keyframeRequestInterval = .milliseconds(500)
        var edge = room(viewers: [viewer1], settings: settings)
        XCTAssertEqual(edge.plane.statistics.keyframeRequests, 1, "the first viewer's join asked for one")

        // A burst of joins and congestion within the interval: no more requests.
        edge.now += .milliseconds(100)
        edge.open(viewer2)
        XCTAssertEqual(edge.join(viewer2, "room", uid: 2, as: .audience).keyframeRequests, [])
        edge.publish(host, "room", uid: 100, .video)
        // Unanswered: asked again every interval, by the tick.
        let ticks = edge.advance(by: .milliseconds(1200), alive: [host, viewer1, viewer2])
        XCTAssertEqual(ticks.filter { if case .requestKeyframe = $0.directive { true } else { false } }.map(\.at),
                       [.milliseconds(500), .milliseconds(1000)])
        // Answered: no more requests.
        edge.publish(host, "room", uid: 100, .video, key: true)
        let later = edge.advance(by: .seconds(2), alive: [host, viewer1, viewer2])
        XCTAssertEqual(later.directives.keyframeRequests, [])
        XCTAssertEqual(edge.plane.statistics.keyframeRequests, 3)
    }

    func testGOPCacheKeepsOnlyTheCurrentGOPAndDropsOneThatOutgrowsItsBounds() {
        var settings = EdgeSettings()
        settings.gopMaxFrames = 3
        settings.gopMaxBytes = 10_000
        var edge = room(viewers: [], settings: settings)
        edge.publish(host, "room", uid: 100, .video, key: true)
        edge.publish(host, "room", uid: 100, .video)
        edge.publish(host, "room", uid: 100, .video, key: true)
        edge.publish(host, "room", uid: 100, .video)
        edge.open(viewer1)
        edge.join(viewer1, "room", uid: 1, as: .audience)
        XCTAssertEqual(edge.frames(to: viewer1).map(\.number), [3, 4], "only the frames since the last keyframe")

        // Too many frames: the GOP is dropped whole, a newcomer waits for a keyframe.
        edge.publish(host, "room", uid: 100, .video)
        edge.publish(host, "room", uid: 100, .video)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.cachedFrames, 0)
        edge.open(viewer2)
        let join = edge.join(viewer2, "room", uid: 2, as: .audience)
        XCTAssertEqual(edge.frames(to: viewer2), [])
        XCTAssertEqual(join.keyframeRequests, [video("room", 100)])

        // Too many bytes: same.
        edge.publish(host, "room", uid: 100, .video, key: true, size: 6000)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.cachedBytes, 6000)
        edge.publish(host, "room", uid: 100, .video, size: 5000)
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.cachedFrames, 0)
    }

    func testAudioHasNoGOPAndACongestedAudioSubscriberJustMissesThatFrame() {
        var edge = room(viewers: [viewer1, viewer2])
        edge.publish(host, "room", uid: 100, .audio)
        edge.blocked = [viewer1]
        let blocked = edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(blocked, [], "no state change, no keyframe request for audio")
        edge.blocked = []
        edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(edge.frames(to: viewer1).map(\.number), [1, 3])
        XCTAssertEqual(edge.frames(to: viewer2).map(\.number), [1, 2, 3])
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .audio)?.cachedFrames, 0)

        edge.open(viewer3)
        edge.join(viewer3, "room", uid: 3, as: .audience)
        XCTAssertEqual(edge.frames(to: viewer3), [], "a new audio subscriber starts with the next frame")
        edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(edge.frames(to: viewer3).map(\.number), [4])
    }

    func testLocalMuteStopsDeliveryAndUnmuteRestartsFromTheGOPCache() {
        var edge = room(viewers: [viewer1])
        edge.publish(host, "room", uid: 100, .video, key: true)
        let mute = edge.run(edge.plane.muteRemote(viewer1, requestID: 1, track: video("room", 100), muted: true, now: edge.now))
        XCTAssertEqual(mute.replies(to: viewer1).first?.body, .done)
        XCTAssertEqual(mute.events(to: viewer1), [.remoteVideoStateChanged(video("room", 100), state: .stopped, reason: .localMuted)])
        edge.publish(host, "room", uid: 100, .video)
        edge.publish(host, "room", uid: 100, .video)
        edge.run(edge.plane.muteRemote(viewer1, track: audio("room", 100), muted: true, now: edge.now)).forEach { _ in }
        edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(edge.frames(to: viewer1).map(\.description), ["v100#1K"])
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.subscribers, [viewer1], "still subscribed")

        let unmute = edge.run(edge.plane.muteRemote(viewer1, track: video("room", 100), muted: false, now: edge.now))
        XCTAssertEqual(unmute.events(to: viewer1), [
            .remoteVideoStateChanged(video("room", 100), state: .starting, reason: .localUnmuted),
            .remoteVideoStateChanged(video("room", 100), state: .decoding, reason: .localUnmuted),
        ])
        XCTAssertEqual(edge.frames(to: viewer1).map(\.description), ["v100#1K", "v100#1K", "v100#2", "v100#3"])
    }

    func testExplicitSubscriptionsOverrideAutoSubscribeAndSurviveUntilTheTrackExists() {
        var edge = TestEdge()
        edge.open(host)
        edge.open(viewer1)
        edge.join(viewer1, "room", uid: 1, as: .audience, options: MediaOptions(autoSubscribeAudio: false, autoSubscribeVideo: false))
        // Subscribing before the host is even there.
        let early = edge.run(edge.plane.subscribe(viewer1, requestID: 1, track: video("room", 100), now: edge.now))
        XCTAssertEqual(early.replies.first?.body, .done)
        let hostJoin = edge.join(host, "room", uid: 100, as: .broadcaster)
        XCTAssertEqual(hostJoin.events(to: viewer1), [
            .userJoined(channel: "room", uid: 100),
            .remoteTrackPublished(audio("room", 100)),
            .remoteTrackPublished(video("room", 100)),
            .remoteVideoStateChanged(video("room", 100), state: .starting, reason: .remoteUnmuted),
        ])
        edge.publish(host, "room", uid: 100, .video, key: true)
        edge.publish(host, "room", uid: 100, .audio)
        XCTAssertEqual(edge.frames(to: viewer1).map(\.description), ["v100#1K"], "audio not subscribed")

        let off = edge.run(edge.plane.unsubscribe(viewer1, requestID: 2, track: video("room", 100), now: edge.now))
        XCTAssertEqual(off.events(to: viewer1), [.remoteVideoStateChanged(video("room", 100), state: .stopped, reason: .unsubscribed)])
        // Turning auto-subscribe on does not override the explicit unsubscribe.
        edge.run(edge.plane.updateOptions(viewer1, channel: "room", update: MediaOptionsUpdate(autoSubscribeAudio: true, autoSubscribeVideo: true), now: edge.now)).forEach { _ in }
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .video)?.subscribers, [])
        XCTAssertEqual(edge.plane.channel("room")?.track(uid: 100, kind: .audio)?.subscribers, [viewer1])
        XCTAssertEqual(edge.run(edge.plane.subscribe(viewer1, requestID: 3, track: video("room", 1), now: edge.now)).failure?.code, .invalidArgument)
    }

    func testUnreachableSubscriberIsDroppedAndTheOthersContinue() {
        var edge = room(viewers: [viewer1, viewer2])
        edge.open(guest)
        edge.join(guest, "room", uid: 50, as: .broadcaster)
        edge.publish(host, "room", uid: 100, .video, key: true)
        edge.gone = [guest]
        let out = edge.publish(host, "room", uid: 100, .video)
        XCTAssertEqual(out.closedSessions, [guest])
        XCTAssertEqual(out.recipients(of: .userOffline(channel: "room", uid: 50, reason: .dropped)), [host, viewer1, viewer2])
        XCTAssertNil(edge.plane.session(guest))
        XCTAssertEqual(edge.frames(to: viewer2).map(\.number), [1, 2])
    }

    func testFramesThatDoNotMatchTheConnectionAreRefused() {
        var edge = room(viewers: [viewer1])
        let wrongUID = edge.plane.forward(
            TestFrame(uid: 999, kind: .video, number: 1, isKeyframe: true),
            info: MediaFrameInfo(channel: "room", publisherUID: 999, kind: .video, isKeyframe: true, payloadSize: 10),
            from: host, now: edge.now) { _, _ in .sent }
        XCTAssertEqual(wrongUID.events(to: host).errorCodes, [.invalidArgument])
        edge.now += .seconds(2)
        let unknownKind = edge.plane.forward(
            TestFrame(uid: 100, kind: .video, number: 1, isKeyframe: true),
            info: MediaFrameInfo(channel: "room", publisherUID: 100, kind: nil, payloadSize: 10),
            from: host, now: edge.now) { _, _ in .sent }
        XCTAssertEqual(unknownKind.events(to: host).errorCodes, [.unknownTrack])
        let notJoined = edge.publish(host, "elsewhere", uid: 100, .audio)
        XCTAssertEqual(notJoined.events(to: host).errorCodes, [.notJoined])
        let noSession = edge.publish(SessionID(77), "room", uid: 100, .audio)
        XCTAssertEqual(noSession, [], "nobody to tell")
        XCTAssertEqual(edge.delivered.count, 0)
    }

    // MARK: - The building blocks on their own

    func testTrackForwarderStandalone() {
        var forwarder = TrackForwarder<Int>(kind: .video, publisher: host, gopMaxFrames: 10, gopMaxBytes: 1000)
        var transitions = ContiguousArray<SubscriberTransition>()
        var sent: [(SessionID, Int)] = []
        XCTAssertEqual(forwarder.addSubscriber(viewer1, muted: false, reason: .subscribed), .awaitKeyframe)
        XCTAssertTrue(forwarder.keyframeWanted)
        XCTAssertTrue(forwarder.takeKeyframeRequest(now: .zero, interval: .seconds(1)))
        XCTAssertFalse(forwarder.takeKeyframeRequest(now: .milliseconds(999), interval: .seconds(1)))
        _ = forwarder.forward(1, isKeyframe: true, bytes: 100, transitions: &transitions) { sent.append(($0, $1)); return .sent }
        _ = forwarder.forward(2, isKeyframe: false, bytes: 100, transitions: &transitions) { sent.append(($0, $1)); return .sent }
        XCTAssertEqual(transitions, [SubscriberTransition(session: viewer1, change: .videoState(.decoding, .subscribed))])
        XCTAssertFalse(forwarder.keyframeWanted)
        XCTAssertEqual(forwarder.addSubscriber(viewer2, muted: false, reason: .subscribed), .sendCache)
        XCTAssertNil(forwarder.addSubscriber(viewer2, muted: false, reason: .subscribed), "already subscribed")
        let counts = forwarder.sendCache(to: viewer2, transitions: &transitions) { sent.append(($0, $1)); return .sent }
        XCTAssertEqual(counts, ForwardCounts(delivered: 2))
        XCTAssertEqual(sent.map(\.1), [1, 2, 1, 2])
        var order: [SessionID] = []
        forwarder.forEachSubscriber { session, state, muted in
            XCTAssertEqual(state, .flowing)
            XCTAssertFalse(muted)
            order.append(session)
        }
        XCTAssertEqual(order, [viewer1, viewer2])
        XCTAssertTrue(forwarder.removeSubscriber(viewer1))
        XCTAssertEqual(forwarder.subscriberCount, 1)
    }

    func testGOPCacheInvariants() {
        var cache = GOPCache<String>(maxFrames: 4, maxBytes: 100)
        XCTAssertFalse(cache.add("d0", isKeyframe: false, bytes: 10), "no keyframe yet")
        XCTAssertTrue(cache.add("K1", isKeyframe: true, bytes: 40))
        XCTAssertTrue(cache.add("d2", isKeyframe: false, bytes: 40))
        XCTAssertFalse(cache.add("d3", isKeyframe: false, bytes: 40), "over 100 bytes: dropped whole")
        XCTAssertTrue(cache.isEmpty)
        XCTAssertFalse(cache.add("d4", isKeyframe: false, bytes: 1), "stays empty until a keyframe")
        XCTAssertFalse(cache.add("K5", isKeyframe: true, bytes: 101), "a keyframe larger than the bound")
        XCTAssertTrue(cache.add("K6", isKeyframe: true, bytes: 1))
        for i in 7...9 { XCTAssertTrue(cache.add("d\(i)", isKeyframe: false, bytes: 1)) }
        XCTAssertEqual(Array(cache.frames), ["K6", "d7", "d8", "d9"])
        XCTAssertEqual(cache.byteCount, 4)
        XCTAssertFalse(cache.add("d10", isKeyframe: false, bytes: 1), "over 4 frames")
        XCTAssertEqual(cache.count, 0)
    }

    func testSessionIDPacksARoutingIDWithoutLoss() throws {
        let routingID: [UInt8] = [0, 0x8b, 0x45, 0x67, 0x01]
        let id = try XCTUnwrap(SessionID(routingID: routingID))
        XCTAssertEqual(id.routingID, routingID)
        XCTAssertEqual(id.routingIDLength, 5)
        XCTAssertNotEqual(SessionID(routingID: [0, 0x8b, 0x45, 0x67]), id)
        XCTAssertNil(SessionID(routingID: [UInt8](repeating: 1, count: 8)))
        XCTAssertNil(SessionID(routingID: [UInt8]()))
        id.withRoutingID { XCTAssertEqual(Array($0), routingID) }
    }
}
