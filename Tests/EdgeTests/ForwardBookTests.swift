import Edge
import Foundation
import ShowroomWire
import XCTest

/// The forwarding state machine with plain values and a hand-moved clock.
final class ForwardBookTests: XCTestCase {
    let key = ForwardKey(channel: "src", uid: 7)
    let host = SessionID(1)
    let edgeA = ForwardEdge(id: "edge-a", endpoint: "tcp://a")
    let edgeB = ForwardEdge(id: "edge-b", endpoint: "tcp://b")

    private func destinations(_ names: String...) -> [ForwardDestination] {
        names.map { ForwardDestination(channel: $0, token: "token-\($0)") }
    }

    private func changes(_ directives: [ForwardDirective]) -> [String] {
        directives.compactMap { directive in
            guard case .notify(_, let change) = directive else { return nil }
            return "\(change.destination.channel) \(change.destination.state) \(change.destination.reason)"
        }
    }

    private func attempt(_ directives: [ForwardDirective], _ channel: String) -> UInt64? {
        for directive in directives {
            if case .place(_, channel, _, let attempt, _) = directive { return attempt }
        }
        return nil
    }

    /// Starts a forward and runs each destination to running on `edge`.
    private func running(_ book: inout ForwardBook, _ names: [String], on edge: ForwardEdge, now: Duration = .zero) throws {
        var out: [ForwardDirective] = []
        _ = try book.apply(.start(names.map { ForwardDestination(channel: $0, token: "token-\($0)") }), to: key, from: host, now: now, &out)
        for name in names {
            let n = try XCTUnwrap(attempt(out, name))
            XCTAssertEqual(book.placed(key, destination: name, attempt: n, .success(edge), now: now),
                           [.join(key, destination: name, token: "token-\(name)", on: edge, attempt: n)])
            _ = book.joined(key, destination: name, attempt: n, .success(()), now: now)
        }
    }

    func testAStartedDestinationGoesConnectingThenRunningWithOneEventPerChange() throws {
        var book = ForwardBook()
        var out: [ForwardDirective] = []
        let statuses = try book.apply(.start(destinations("d1", "d2")), to: key, from: host, now: .zero, &out)
        XCTAssertEqual(statuses.map(\.state), [.connecting, .connecting])
        XCTAssertEqual(changes(out), ["d1 connecting started", "d2 connecting started"])
        let n = try XCTUnwrap(attempt(out, "d1"))
        let joined = book.placed(key, destination: "d1", attempt: n, .success(edgeA), now: .zero)
        XCTAssertEqual(joined, [.join(key, destination: "d1", token: "token-d1", on: edgeA, attempt: n)])
        let run = book.joined(key, destination: "d1", attempt: n, .success(()), now: .zero)
        XCTAssertEqual(changes(run), ["d1 running joined"])
        XCTAssertTrue(run.contains(.requestKeyframe(TrackID(channel: "src", uid: 7, kind: .video), from: host)), "the destination's viewers need a keyframe")
        XCTAssertEqual(book.targets(channel: "src", uid: 7)?.targets, [ForwardTarget(channel: "d1", edge: edgeA)])
        // A stale answer (an older attempt) changes nothing.
        XCTAssertEqual(book.joined(key, destination: "d2", attempt: n, .success(()), now: .zero), [])
        XCTAssertEqual(book.statuses(key).map(\.state), [.running, .connecting])
    }

    func testADestinationWhoseStageDoesNotSeatTheHostYetIsJoinedAgainShortly() throws {
        var book = ForwardBook()
        var out: [ForwardDirective] = []
        _ = try book.apply(.start(destinations("peer")), to: key, from: host, now: .zero, &out)
        let n = try XCTUnwrap(attempt(out, "peer"))
        _ = book.placed(key, destination: "peer", attempt: n, .success(edgeA), now: .zero)
        let refused = book.joined(key, destination: "peer", attempt: n, .failure(ShowroomError(.notOnStage, "x")), now: .zero)
        XCTAssertEqual(changes(refused), ["peer failure destination refused"])
        XCTAssertNil(attempt(book.tick(now: .milliseconds(50)), "peer"), "not before the interval")
        let again = book.tick(now: .milliseconds(100))
        XCTAssertNotNil(attempt(again, "peer"), "the room's stage may have arrived meanwhile")
    }

    func testRefusalsMapToTheVendorsReasonsAndOnlyUnreachableRetries() throws {
        let cases: [(ShowroomError, ForwardStateReason, Bool)] = [
            (ShowroomError(.tokenUidMismatch, "x"), .invalidToken, false),
            (ShowroomError(.tokenExpired, "x"), .invalidToken, false),
            (ShowroomError(.uidReplaced, "x"), .sameUIDInDestination, false),
            (ShowroomError(.privilegeExpired, "x"), .tokenExpired, false),
            (ShowroomError(.banned, "x"), .destinationRefused, false),
            (.unavailable("x"), .destinationUnreachable, true),
            (ShowroomError(.noEdgeAvailable, "x"), .destinationUnreachable, true),
        ]
        for (error, reason, retries) in cases {
            var book = ForwardBook()
            var out: [ForwardDirective] = []
            _ = try book.apply(.start(destinations("d1")), to: key, from: host, now: .zero, &out)
            let failed = book.placed(key, destination: "d1", attempt: try XCTUnwrap(attempt(out, "d1")), .failure(error), now: .zero)
            XCTAssertEqual(changes(failed), ["d1 failure \(reason)"], "\(error.code)")
            XCTAssertEqual(book.statuses(key).first?.error, error)
            let retry = book.tick(now: .seconds(1))
            XCTAssertEqual(attempt(retry, "d1") != nil, retries, "\(error.code) retried")
        }
    }

    func testADeadDestinationEdgeFailsItsDestinationsAndTheyArePlacedAgainAvoidingIt() throws {
        var book = ForwardBook()
        try running(&book, ["d1", "d2"], on: edgeA)
        var out: [ForwardDirective] = []
        _ = try book.apply(.update(destinations("d1", "d2", "d3")), to: key, from: host, now: .milliseconds(100), &out)
        _ = book.placed(key, destination: "d3", attempt: try XCTUnwrap(attempt(out, "d3")), .success(edgeB), now: .milliseconds(100))
        let down = book.linkDown(key, edge: edgeA, .unavailable("broke"), now: .seconds(1))
        XCTAssertEqual(changes(down), ["d1 failure destination unreachable", "d2 failure destination unreachable"])
        XCTAssertEqual(book.statuses(key).first?.error?.code, .forwardDestinationUnreachable)
        XCTAssertNil(book.targets(channel: "src", uid: 7), "nothing runs")
        XCTAssertEqual(changes(book.tick(now: .milliseconds(1900))), [], "not before the retry interval")
        let retry = book.tick(now: .seconds(2))
        XCTAssertEqual(changes(retry), ["d1 connecting retrying", "d2 connecting retrying"])
        XCTAssertTrue(retry.contains { if case .place(_, "d1", _, _, "edge-a") = $0 { true } else { false } }, "the dead edge is named")
        let n = try XCTUnwrap(attempt(retry, "d1"))
        _ = book.placed(key, destination: "d1", attempt: n, .success(edgeB), now: .seconds(2))
        XCTAssertEqual(changes(book.joined(key, destination: "d1", attempt: n, .success(()), now: .seconds(2))), ["d1 running joined"])
    }

    func testRetriesAreBounded() throws {
        var settings = ForwardSettings()
        settings.maxRetries = 2
        var book = ForwardBook(settings: settings)
        var out: [ForwardDirective] = []
        _ = try book.apply(.start(destinations("d1")), to: key, from: host, now: .zero, &out)
        var n = try XCTUnwrap(attempt(out, "d1"))
        var now = Duration.zero
        for _ in 0..<2 {
            _ = book.placed(key, destination: "d1", attempt: n, .failure(.unavailable("no")), now: now)
            now += .seconds(1)
            n = try XCTUnwrap(attempt(book.tick(now: now), "d1"))
        }
        _ = book.placed(key, destination: "d1", attempt: n, .failure(.unavailable("no")), now: now)
        XCTAssertNil(attempt(book.tick(now: now + .seconds(5)), "d1"), "gave up after 2 retries")
        XCTAssertEqual(book.statuses(key).first?.state, .failure)
    }

    func testARedirectIsFollowedToTheEdgeItNames() throws {
        var book = ForwardBook()
        var out: [ForwardDirective] = []
        _ = try book.apply(.start(destinations("d1")), to: key, from: host, now: .zero, &out)
        let n = try XCTUnwrap(attempt(out, "d1"))
        _ = book.placed(key, destination: "d1", attempt: n, .success(edgeA), now: .zero)
        var redirect = WireRedirect()
        redirect.edgeID = "edge-b"
        redirect.clientEndpoint = "tcp://b"
        let next = book.joined(key, destination: "d1", attempt: n, .failure(.channelElsewhere("moved", redirect: redirect)), now: .zero)
        XCTAssertEqual(next, [.join(key, destination: "d1", token: "token-d1", on: edgeB, attempt: n)])
    }

    func testAnUpdateLeavesRemovedDestinationsJoinsNewOnesAndRejoinsANewToken() throws {
        var book = ForwardBook()
        try running(&book, ["d1", "d2", "d3"], on: edgeA)
        var out: [ForwardDirective] = []
        let after = try book.apply(
            .update([ForwardDestination(channel: "d1", token: "token-d1"), ForwardDestination(channel: "d2", token: "new"),
                     ForwardDestination(channel: "d4", token: "token-d4")]),
            to: key, from: host, now: .seconds(1), &out)
        XCTAssertEqual(after.map(\.channel), ["d1", "d2", "d4"])
        XCTAssertEqual(changes(out), ["d3 idle removed", "d2 connecting token updated", "d4 connecting started"])
        XCTAssertTrue(out.contains(.leave(key, destination: "d3", on: edgeA)))
        XCTAssertTrue(out.contains(.leave(key, destination: "d2", on: edgeA)))
        XCTAssertFalse(out.contains { if case .leave(_, "d1", _) = $0 { true } else { false } }, "unchanged d1 stays")
        XCTAssertTrue(out.contains { if case .place(_, "d2", "new", _, _) = $0 { true } else { false } })
        XCTAssertEqual(book.targets(channel: "src", uid: 7)?.targets.map(\.channel), ["d1"])
    }

    func testUpdatesBeyondTenASecondAreRefusedAndChangeNothing() throws {
        var book = ForwardBook()
        var out: [ForwardDirective] = []
        _ = try book.apply(.start(destinations("d1")), to: key, from: host, now: .zero, &out)
        for i in 1..<10 {
            _ = try book.apply(.update(destinations("d1")), to: key, from: host, now: .milliseconds(i * 10), &out)
        }
        out = []
        XCTAssertThrowsError(try book.apply(.update(destinations("d2")), to: key, from: host, now: .milliseconds(500), &out)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .forwardUpdateTooFrequent)
        }
        XCTAssertEqual(out, [])
        XCTAssertEqual(book.statuses(key).map(\.channel), ["d1"])
        // A second after the first change there is room again.
        XCTAssertNoThrow(try book.apply(.update(destinations("d2")), to: key, from: host, now: .milliseconds(1000), &out))
    }

    func testWrongOperationsAreRefused() throws {
        var book = ForwardBook()
        var out: [ForwardDirective] = []
        for operation in [ForwardOperation.update([]), .stop, .pause, .resume] {
            XCTAssertThrowsError(try book.apply(operation, to: key, from: host, now: .zero, &out)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, .forwardNotStarted)
            }
        }
        _ = try book.apply(.start(destinations("d1")), to: key, from: host, now: .zero, &out)
        XCTAssertThrowsError(try book.apply(.start(destinations("d2")), to: key, from: host, now: .zero, &out)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .forwardAlreadyStarted)
        }
        XCTAssertThrowsError(try book.apply(.update(destinations("a", "b", "c", "d", "e")), to: key, from: host, now: .zero, &out)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .forwardTooManyDestinations)
        }
    }

    func testKeyframeRequestsFromAnyNumberOfDestinationsReachThePublisherAtMostOncePerInterval() throws {
        var book = ForwardBook()
        try running(&book, ["d1", "d2", "d3", "d4"], on: edgeA)  // the last join asked for one at 0
        let video = ForwardDirective.requestKeyframe(TrackID(channel: "src", uid: 7, kind: .video), from: host)
        var sent = 0
        var now = Duration.zero
        // 4 destinations asking every 20 ms for 2 s.
        while now < .seconds(2) {
            for _ in 0..<4 { sent += book.keyframeWanted(key, now: now).filter { $0 == video }.count }
            sent += book.tick(now: now).filter { $0 == video }.count
            now += .milliseconds(20)
        }
        XCTAssertEqual(sent, 3, "at 0.5, 1 and 1.5 s (the join asked at 0), none in between")
        // One asked within the interval goes out when it ends.
        var quiet = ForwardBook()
        try running(&quiet, ["d1"], on: edgeA)
        XCTAssertEqual(quiet.keyframeWanted(key, now: .milliseconds(100)), [])
        XCTAssertEqual(quiet.tick(now: .milliseconds(400)), [])
        XCTAssertEqual(quiet.tick(now: .milliseconds(500)), [video])
        XCTAssertEqual(quiet.tick(now: .milliseconds(1200)), [], "once")
    }

    func testPauseStopsFramesAndResumeAsksForAKeyframe() throws {
        var book = ForwardBook()
        try running(&book, ["d1"], on: edgeA)
        var out: [ForwardDirective] = []
        _ = try book.apply(.pause, to: key, from: host, now: .seconds(1), &out)
        XCTAssertEqual(changes(out), ["d1 running paused"])
        XCTAssertNil(book.targets(channel: "src", uid: 7))
        out = []
        _ = try book.apply(.resume, to: key, from: host, now: .seconds(2), &out)
        XCTAssertEqual(changes(out), ["d1 running resumed"])
        XCTAssertTrue(out.contains(.requestKeyframe(TrackID(channel: "src", uid: 7, kind: .video), from: host)))
        XCTAssertNotNil(book.targets(channel: "src", uid: 7))
    }

    func testTheSourceLeavingEndsEveryDestinationAndStopLeavesThem() throws {
        var book = ForwardBook()
        try running(&book, ["d1", "d2"], on: edgeA)
        let left = book.sourceLeft(key, now: .seconds(1))
        XCTAssertEqual(changes(left), ["d1 idle source left", "d2 idle source left"])
        XCTAssertEqual(left.filter { if case .leave = $0 { true } else { false } }.count, 2)
        XCTAssertTrue(book.isEmpty)
        try running(&book, ["d1"], on: edgeA)
        var out: [ForwardDirective] = []
        XCTAssertEqual(try book.apply(.stop, to: key, from: host, now: .seconds(2), &out), [])
        XCTAssertEqual(changes(out), ["d1 idle stopped"])
        XCTAssertTrue(out.contains(.leave(key, destination: "d1", on: edgeA)))
    }

    // MARK: - Wire

    func testTheForwardedHeaderDecodesToThePublishersHeaderInTheDestinationChannel() throws {
        var header = WireMediaHeader()
        header.channel = "source channel"
        header.publisherUid = 4_000_000_000
        header.track = .video
        header.codec = .vp8
        header.sequence = 300
        header.captureTimeUs = 1_234_567_890_123
        header.keyframe = true
        header.width = 640
        header.height = 360
        header.payloadSize = 70_000
        header.sendTimeUs = 1_234_567_899_999
        var writer = ForwardedFrameHeader()
        for destination in ["d", String(repeating: "x", count: 64)] {
            writer.write(header, channel: destination)
            let envelope = try WireEnvelope(serializedBytes: writer.bytes)
            XCTAssertEqual(envelope.kind, .mediaFrame)
            XCTAssertEqual(envelope.protocolVersion, WireEnvelope.currentProtocolVersion)
            var expected = header
            expected.channel = destination
            XCTAssertEqual(try WireMediaHeader(serializedBytes: envelope.body), expected)
        }
        var audio = WireMediaHeader()
        audio.channel = "a"
        audio.track = .audio
        audio.codec = .opus
        audio.audioLevel = 55
        audio.payloadSize = 80
        writer.write(audio, channel: "b")
        var expected = audio
        expected.channel = "b"
        XCTAssertEqual(try WireMediaHeader(serializedBytes: try WireEnvelope(serializedBytes: writer.bytes).body), expected)

        // Destinations on one edge share one message: the others ride in also_channels.
        writer.write(audio, channel: "b", also: ["c", "d"][...])
        expected.alsoChannels = ["c", "d"]
        let shared = try WireMediaHeader(serializedBytes: try WireEnvelope(serializedBytes: writer.bytes).body)
        XCTAssertEqual(shared, expected)
        XCTAssertNoThrow(try EdgeCodec.checkedFrameInfo(header: shared, payloadSize: 80))
    }

    func testAlsoChannelsAreCheckedLikeTheFramesOwnChannel() {
        var header = WireMediaHeader()
        header.channel = "a"
        header.track = .audio
        header.codec = .opus
        header.payloadSize = 10
        for (also, why) in [(["b", "c", "d", "e"], "more than 3"), (["a"], "its own channel"), ([""], "an empty name"),
                            ([String(repeating: "x", count: 65)], "a name too long")] {
            header.alsoChannels = also
            XCTAssertThrowsError(try EdgeCodec.checkedFrameInfo(header: header, payloadSize: 10), why) {
                XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument, why)
            }
        }
    }

    func testHostileForwardRequestsAreRefusedWithStableCodes() throws {
        func request(_ kind: WireMessageKind, _ channel: String, _ destinations: [(String, String)]) throws -> WireEnvelope {
            var body = EdgeForwardRequest()
            body.channel = channel
            body.destinations = destinations.map { destination in
                var wire = EdgeForwardDestination()
                wire.channel = destination.0
                wire.token = destination.1
                return wire
            }
            return try WireEnvelope(request: kind, id: 1, body: body)
        }
        let cases: [(WireEnvelope, ShowroomError.Code)] = [
            (try request(.startForward, "src", []), .invalidArgument),
            (try request(.startForward, "src", (0..<5).map { ("d\($0)", "t") }), .forwardTooManyDestinations),
            (try request(.startForward, "src", (0..<100_000).map { _ in ("d", "t") }), .forwardTooManyDestinations),
            (try request(.startForward, "src", [("src", "t")]), .forwardInvalidDestination),
            (try request(.startForward, "src", [("d", "t"), ("d", "t")]), .forwardInvalidDestination),
            (try request(.startForward, "src", [("bad/name", "t")]), .invalidArgument),
            (try request(.startForward, "src", [("", "t")]), .invalidArgument),
            (try request(.startForward, "src", [("d", "")]), .invalidArgument),
            (try request(.updateForward, "src", [("d", String(repeating: "7", count: 2049))]), .invalidArgument),
            (try request(.updateForward, String(repeating: "s", count: 65), []), .invalidArgument),
        ]
        for (envelope, code) in cases {
            XCTAssertThrowsError(try EdgeCodec.forwardRequest(from: envelope)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, code, "\(error)")
            }
        }
        var garbage = WireEnvelope()
        garbage.kind = .startForward
        garbage.body = Data([0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try EdgeCodec.forwardRequest(from: garbage)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .malformedMessage)
        }
        let fine = try EdgeCodec.forwardRequest(from: try request(.updateForward, "src", [("d", "t")]))
        XCTAssertEqual(fine.operation, .update([ForwardDestination(channel: "d", token: "t")]))
        var command = EdgeForwardCommand()
        command.channel = "src"
        XCTAssertThrowsError(try EdgeCodec.forwardCommand(command)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, "no uid")
        }
        command.uid = 7
        XCTAssertThrowsError(try EdgeCodec.forwardCommand(command)) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .invalidArgument, "no action")
        }
        let stop = try EdgeCodec.forwardCommand(EdgeCodec.forwardCommand(channel: "src", uid: 7, operation: .stop))
        XCTAssertEqual(stop.operation, .stop)
    }

    func testTheForwardsAreListedWithTheirDestinationsAndEndWhenTheirBroadcasterLeavesOrStepsDown() throws {
        var book = ForwardBook()
        try running(&book, ["d1"], on: edgeA)
        let listed = book.publishers
        XCTAssertEqual(listed.map(\.channel), ["src"])
        XCTAssertEqual(listed.map(\.uid), [7])
        XCTAssertEqual(listed.first?.destinations.map(\.channel), ["d1"])
        XCTAssertEqual(listed.first?.paused, false)
        XCTAssertEqual(book.activity(ChannelActivity(.audienceJoined, channel: "src", uid: 7, at: .zero), now: .zero), [], "not the source")
        XCTAssertEqual(book.activity(ChannelActivity(.broadcasterLeft, channel: "other", uid: 7, at: .zero), now: .zero), [])
        let ended = book.activity(ChannelActivity(.roleToAudience, channel: "src", uid: 7, at: .zero), now: .zero)
        XCTAssertEqual(changes(ended), ["d1 idle source left"])
        XCTAssertTrue(ended.contains(.leave(key, destination: "d1", on: edgeA)))
        XCTAssertTrue(book.isEmpty)
        XCTAssertEqual(book.publishers, [])
    }

    func testOnlyABroadcastersOwnUidIsForwardedAndNeverAForwardedUser() throws {
        var book = ForwardBook()
        XCTAssertEqual(try book.sourceKey(channel: "src", uid: 7, role: .broadcaster, clientID: "app"), key)
        XCTAssertThrowsError(try book.sourceKey(channel: "src", uid: 7, role: .audience, clientID: "app")) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .roleForbidsPublish)
        }
        XCTAssertThrowsError(try book.sourceKey(channel: "src", uid: 7, role: .broadcaster, clientID: ForwardLinkIdentity.clientIDPrefix + "x")) { error in
            XCTAssertEqual((error as? ShowroomError)?.code, .permissionDenied)
        }
        try running(&book, ["d1"], on: edgeA)
        XCTAssertEqual(try book.sourceKey(channel: "src", uid: 7, role: .audience, clientID: "app"), key, "stopping is allowed whatever the role")
    }

    func testWhoMayControlWhichForwardIsReadFromThePlane() throws {
        var edge = TestEdge()
        edge.open(SessionID(1))
        edge.open(SessionID(2))
        edge.open(SessionID(3))
        edge.join(SessionID(1), "src", uid: 7, as: .broadcaster)
        edge.join(SessionID(2), "src", uid: 8, as: .audience)
        let book = ForwardBook()
        let start = try EdgeCodec.envelope(forward: "src", .start(destinations("d1")), id: 4)
        let request = try book.clientRequest(start, from: SessionID(1), in: edge.plane)
        XCTAssertEqual(request.channel, "src")
        XCTAssertEqual(request.operation, .start(destinations("d1")))
        XCTAssertEqual(request.key, key, "a broadcaster controls its own uid's forward")
        let refusals: [(SessionID, WireEnvelope, ShowroomError.Code)] = [
            (SessionID(9), start, .noSession),
            (SessionID(2), start, .roleForbidsPublish),
            (SessionID(3), start, .notJoined),
            (SessionID(1), try EdgeCodec.envelope(forward: "elsewhere", .stop, id: 5), .notJoined),
        ]
        for (session, envelope, code) in refusals {
            XCTAssertThrowsError(try book.clientRequest(envelope, from: session, in: edge.plane)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, code, "session \(session)")
            }
        }
        let command = try book.commandSource(channel: "src", uid: 7, in: edge.plane)
        XCTAssertEqual(command.session, SessionID(1))
        XCTAssertEqual(command.key, key)
        for (channel, uid, code) in [("src", UInt32(99), ShowroomError.Code.notJoined), ("other", 7, .notJoined), ("src", 8, .roleForbidsPublish)] {
            XCTAssertThrowsError(try book.commandSource(channel: channel, uid: uid, in: edge.plane)) { error in
                XCTAssertEqual((error as? ShowroomError)?.code, code, "uid \(uid) in \(channel)")
            }
        }
    }
}
