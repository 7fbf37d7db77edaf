import EdgeProtocol
@testable import ShowroomKit
import ShowroomWire
import XCTest

/// An engine state driven by hand: a fake clock, the timers it asked for, and the requests it sent
/// waiting for the test to answer them as an edge would. Like the shell, it fails a closed
/// session's waiting requests, and (unless the session is silenced) hears the edge answer every
/// heartbeat.
struct EngineStateDriver {
    struct Sent {
        let request: EdgeRequest
        let session: SessionSerial
        let purpose: EngineRequestPurpose
    }

    var state: EngineState
    var now = ContinuousClock.now
    var timers: [(due: ContinuousClock.Instant, timer: EngineTimer)] = []
    var sent: [Sent] = []
    var events: [EngineEvent] = []
    var completed: [EngineTicket: Result<ChannelConnection?, ShowroomError>] = [:]
    var opened: [SessionSerial: EdgeAddress] = [:]
    var closed: [SessionSerial] = []
    var placements: [(channel: String, avoiding: EdgeAddress?, purpose: PlacementPurpose)] = []
    var movedOut: [SessionSerial] = []
    var keyframesWanted = 0
    /// Sessions whose edge has gone quiet: their heartbeats get no answer.
    var silent: Set<SessionSerial> = []
    private var nextTicket: UInt64 = 1

    init(idle: Duration = .seconds(10), rejoinWindow: Duration = .seconds(30)) {
        state = EngineState(settings: EngineState.Settings(
            clientID: "client", sdkVersion: "test", requestTimeout: .seconds(3), heartbeatInterval: .seconds(1),
            heartbeatTimeout: .seconds(5), interruptedAfterIntervals: 2, sessionIdleTime: idle, rejoinWindow: rejoinWindow))
    }

    mutating func ticket() -> EngineTicket {
        defer { nextTicket += 1 }
        return EngineTicket(value: nextTicket)
    }

    mutating func apply(_ directives: [EngineDirective]) {
        for directive in directives {
            switch directive {
            case .openSession(let serial, let edge): opened[serial] = edge
            case .request(let request, let serial, let purpose, _): sent.append(Sent(request: request, session: serial, purpose: purpose))
            case .heartbeat(let serial): if !silent.contains(serial) { apply(state.heard(serial, now: now)) }
            case .movedOut(let serial): movedOut.append(serial)
            case .closeSession(let serial, let error):
                closed.append(serial)
                let failing = sent.filter { $0.session == serial }
                sent.removeAll { $0.session == serial }
                for request in failing { apply(state.answered(request.purpose, on: serial, .failure(error), now: now)) }
            case .emit(let event): events.append(event)
            case .complete(let ticket, let result): completed[ticket] = result
            case .place(let channel, _, let avoiding, let purpose): placements.append((channel, avoiding, purpose))
            case .schedule(let timer, let delay): timers.append((now + delay, timer))
            case .wantKeyframe: keyframesWanted += 1
            case .forgetMedia, .forgetPendingVideo, .refreshPublishing: break
            }
        }
    }

    /// Moves the fake clock on, firing the timers that fall due on the way, in order.
    mutating func advance(by duration: Duration) {
        let end = now + duration
        while let next = timers.indices.filter({ timers[$0].due <= end }).min(by: { timers[$0].due < timers[$1].due }) {
            let (due, timer) = timers.remove(at: next)
            now = due
            apply(state.fired(timer, now: now))
        }
        now = end
    }

    /// Answers the first waiting request `matches` picks, as the edge would.
    mutating func answer(_ result: Result<EdgeReplyBody, ShowroomError>, file: StaticString = #filePath, line: UInt = #line,
                         to matches: (EdgeRequest, SessionSerial) -> Bool) {
        guard let index = sent.firstIndex(where: { matches($0.request, $0.session) }) else {
            return XCTFail("no request waiting matches; waiting: \(sent.map { "\($0.request) on \($0.session)" })", file: file, line: line)
        }
        let request = sent.remove(at: index)
        apply(state.answered(request.purpose, on: request.session, result, now: now))
    }

    /// The edge of `serial` opens the session.
    mutating func openSession(_ serial: SessionSerial, file: StaticString = #filePath, line: UInt = #line) {
        answer(.success(.sessionOpened(session: SessionID(1), heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(5), limits: EdgeLimits())),
               file: file, line: line) { request, session in
            if case .openSession = request { return session == serial }
            return false
        }
    }

    /// The edge accepts the join of `channel` waiting on `serial`.
    mutating func acceptJoin(_ channel: String, on serial: SessionSerial, uid: UInt32 = 7, role: EdgeProtocol.ClientRole = .audience,
                             file: StaticString = #filePath, line: UInt = #line) {
        answer(.success(.joined(channel: channel, uid: uid, connection: ConnectionID(1), role: role)), file: file, line: line) { request, session in
            if case .join(let name, _, _, _, _) = request { return name == channel && session == serial }
            return false
        }
    }

    /// The requests waiting on `serial`, by kind.
    func waiting(on serial: SessionSerial) -> [String] {
        sent.filter { $0.session == serial }.map { "\($0.request.kind)" }
    }

    /// The connection states reported for `channel`, as "state reason" without payloads.
    func transitions(of channel: String) -> [String] {
        events.compactMap { event in
            guard case .connectionStateChanged(let connection, let state, let reason) = event, connection.channel == channel else { return nil }
            return "\(state) \(String(describing: reason).prefix { $0 != "(" })"
        }
    }

    /// The session serial `opened` gave `edge` last.
    func serial(of edge: EdgeAddress) -> SessionSerial? {
        opened.filter { $0.value == edge }.keys.max()
    }
}

/// The engine's connection and session logic as plain values with a fake clock: joins, warm
/// sessions, heartbeats, rejoins, redirects, moves off a draining edge, shutdown.
final class EngineStateTests: XCTestCase {
    let edgeA = EdgeAddress(id: "edge-a", endpoint: "tcp://127.0.0.1:1001")
    let edgeB = EdgeAddress(id: "edge-b", endpoint: "tcp://127.0.0.1:1002")
    let edgeC = EdgeAddress(id: "edge-c", endpoint: "tcp://127.0.0.1:1003")

    /// Joins `channel` on `edge` as `role` and answers the session (if new) and the join.
    @discardableResult
    func join(_ driver: inout EngineStateDriver, _ channel: String, on edge: EdgeAddress, role: ShowroomKit.ClientRole = .audience,
              file: StaticString = #filePath, line: UInt = #line) -> EngineTicket {
        let ticket = driver.ticket()
        let known = driver.serial(of: edge).map { driver.state.sessions[$0] != nil } ?? false
        driver.apply(driver.state.join(
            token: "token-\(channel)", connection: ChannelConnection(channel: channel, uid: 7), options: ChannelMediaOptions(role: role),
            edge: edge, primary: false, ticket: ticket, now: driver.now))
        let serial = driver.serial(of: edge)!
        if !known { driver.openSession(serial, file: file, line: line) }
        driver.acceptJoin(channel, on: serial, role: role == .broadcaster ? .broadcaster : .audience, file: file, line: line)
        return ticket
    }

    func testAWarmSessionServesTheNextRoomAndClosesOnlyAfterItsIdleTime() throws {
        var driver = EngineStateDriver(idle: .seconds(10))
        let ticket = join(&driver, "room-1", on: edgeA)
        XCTAssertEqual(try driver.completed[ticket]?.get()?.uid, 7)
        XCTAssertEqual(driver.transitions(of: "room-1"), ["connecting joining", "connected joinSucceeded"])
        let a = try XCTUnwrap(driver.serial(of: edgeA))

        let leave = driver.ticket()
        driver.apply(driver.state.leave(ChannelConnection(channel: "room-1", uid: 7), ticket: leave))
        driver.answer(.success(.left(channel: "room-1"))) { request, _ in request.kind == .leave }
        XCTAssertNoThrow(try XCTUnwrap(driver.completed[leave]).get())
        XCTAssertEqual(driver.transitions(of: "room-1").last, "disconnected left")
        driver.advance(by: .seconds(9))
        XCTAssertEqual(driver.waiting(on: a), [], "warm: no close before the idle time")

        // The next room on the same edge uses the warm session: no new session, the join goes at once.
        join(&driver, "room-2", on: edgeA)
        XCTAssertEqual(driver.opened.count, 1)
        XCTAssertEqual(driver.state.sessionsOpened, 1)
        let leaveAgain = driver.ticket()
        driver.apply(driver.state.leave(ChannelConnection(channel: "room-2", uid: 7), ticket: leaveAgain))
        driver.answer(.success(.left(channel: "room-2"))) { request, _ in request.kind == .leave }
        // The first idle timer falls due now, but a channel came and went since: it closes nothing.
        driver.advance(by: .seconds(9))
        XCTAssertEqual(driver.waiting(on: a), [])
        XCTAssertEqual(driver.state.openSessions, [a])
        // The second one closes it: politely, then the socket once the edge answered.
        driver.advance(by: .seconds(1))
        XCTAssertEqual(driver.waiting(on: a), ["closeSession"])
        XCTAssertNil(driver.state.active[edgeA.endpoint], "a closing session takes no new join")
        driver.answer(.success(.sessionClosed)) { request, _ in request.kind == .closeSession }
        XCTAssertEqual(driver.closed, [a])
        XCTAssertTrue(driver.state.sessions.isEmpty)

        // A room after that opens a new session.
        join(&driver, "room-3", on: edgeA)
        XCTAssertEqual(driver.state.sessionsOpened, 2)
    }

    func testWithoutAnIdleTimeTheLastLeaveClosesTheSession() throws {
        var driver = EngineStateDriver(idle: .zero)
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        driver.apply(driver.state.leave(nil as ChannelConnection?, ticket: driver.ticket()))  // no primary: refused
        XCTAssertEqual(driver.completed.values.compactMap { $0.failure?.code }, [.notJoined])
        driver.apply(driver.state.leave(ChannelConnection(channel: "room-1", uid: 7), ticket: driver.ticket()))
        driver.answer(.success(.left(channel: "room-1"))) { request, _ in request.kind == .leave }
        XCTAssertEqual(driver.waiting(on: a), ["closeSession"])
    }

    func testSilenceInterruptsThenRecoversAndPastTheTimeoutTheConnectionRejoinsElsewhereWithItsSubscriptions() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        let track = TrackID(channel: "room-1", uid: 100, kind: .video)
        driver.apply(driver.state.accepted(.subscription(track, subscribed: true), channel: "room-1"))

        driver.silent.insert(a)
        driver.advance(by: .milliseconds(2500))
        XCTAssertEqual(driver.transitions(of: "room-1").last, "reconnecting interrupted")
        driver.apply(driver.state.heard(a, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "room-1").last, "connected recovered")

        driver.advance(by: .seconds(6))
        XCTAssertEqual(driver.transitions(of: "room-1").suffix(2), ["reconnecting interrupted", "reconnecting edgeLost"])
        XCTAssertEqual(driver.closed, [a])
        let placement = try XCTUnwrap(driver.placements.last)
        XCTAssertEqual(placement.channel, "room-1")
        XCTAssertEqual(placement.avoiding, edgeA)
        XCTAssertThrowsError(try driver.state.target(for: ChannelConnection(channel: "room-1", uid: 7)), "no request while rejoining")

        driver.apply(driver.state.placed(channel: "room-1", placement.purpose, .success(edgeB), now: driver.now))
        let b = try XCTUnwrap(driver.serial(of: edgeB))
        driver.openSession(b)
        let rejoin = try XCTUnwrap(driver.sent.first { $0.session == b }?.request)
        guard case .join(_, let uid, let token, _, _) = rejoin else { return XCTFail("sent \(rejoin)") }
        XCTAssertEqual(uid, 7)
        XCTAssertEqual(token, "token-room-1")
        driver.acceptJoin("room-1", on: b)
        XCTAssertEqual(driver.transitions(of: "room-1").last, "connected rejoinSucceeded")
        XCTAssertEqual(driver.state.rejoins, 1)
        XCTAssertEqual(driver.state.connections["room-1"]?.edge, edgeB)
        XCTAssertEqual(driver.waiting(on: b), ["subscribe"], "the subscription is restored on the new edge")
        XCTAssertEqual(driver.keyframesWanted, 1)
        XCTAssertTrue(driver.events.contains { if case .rejoinedChannel = $0 { true } else { false } })
    }

    func testAConnectionTheEdgeForgotRejoinsAtOnceWithItsTokenAndSubscriptionsInsteadOfStayingBroken() throws {
        var driver = EngineStateDriver()
        join(&driver, "live", on: edgeA, role: .broadcaster)
        join(&driver, "other", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        let track = TrackID(channel: "live", uid: 100, kind: .video)
        driver.apply(driver.state.accepted(.subscription(track, subscribed: true), channel: "live"))
        let notJoined = ShowroomError(.notJoined, "this session is not connected to channel live; join it first")

        // A refused frame: the edge sends an error event naming the channel.
        driver.apply(driver.state.edgeEvent(.error(notJoined, channel: "live", track: .video), on: a, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "live").suffix(1), ["reconnecting closedByEdge"])
        let placement = try XCTUnwrap(driver.placements.last)
        XCTAssertEqual(placement.channel, "live")
        XCTAssertNil(placement.avoiding, "the edge lives: it is not avoided")
        XCTAssertEqual(driver.transitions(of: "other"), ["connecting joining", "connected joinSucceeded"], "the session's other connection is untouched")
        XCTAssertEqual(driver.closed, [], "the session stays open")
        // More refusals while it rejoins start nothing new.
        driver.apply(driver.state.edgeEvent(.error(notJoined, channel: "live", track: .audio), on: a, now: driver.now))
        XCTAssertEqual(driver.placements.count, 1)

        // Placed on the same edge: joined again on the same session, with the same token and role.
        driver.apply(driver.state.placed(channel: "live", placement.purpose, .success(edgeA), now: driver.now))
        let rejoin = try XCTUnwrap(driver.sent.first { $0.session == a && $0.request.kind == .join }?.request)
        guard case .join(_, let uid, let token, let role, _) = rejoin else { return XCTFail("sent \(rejoin)") }
        XCTAssertEqual(uid, 7)
        XCTAssertEqual(token, "token-live")
        XCTAssertEqual(role, .broadcaster)
        driver.acceptJoin("live", on: a, role: .broadcaster)
        XCTAssertEqual(driver.transitions(of: "live").suffix(2), ["reconnecting closedByEdge", "connected rejoinSucceeded"])
        XCTAssertEqual(driver.waiting(on: a), ["subscribe"], "the subscription is restored")
        XCTAssertEqual(driver.opened.count, 1, "no new session")

        // A request answered "not joined" does the same; a connection the app left does nothing.
        driver.apply(driver.state.forgottenByEdge("other", on: a, notJoined, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "other").last, "reconnecting closedByEdge")
        let errorsBefore = driver.events.filter { if case .error = $0 { true } else { false } }.count
        driver.apply(driver.state.edgeEvent(.error(notJoined, channel: "gone", track: nil), on: a, now: driver.now))
        XCTAssertEqual(driver.placements.count, 2)
        XCTAssertEqual(driver.events.filter { if case .error = $0 { true } else { false } }.count, errorsBefore,
                       "a frame refused after the app left its channel (it was in flight) is no error for the app")
    }

    func testAConnectionClosedBecauseItsChannelIsPlacedElsewhereRejoinsThereAtOnce() throws {
        var driver = EngineStateDriver()
        join(&driver, "live", on: edgeA, role: .broadcaster)
        join(&driver, "other", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        var redirect = WireRedirect()
        redirect.edgeID = edgeB.id
        redirect.clientEndpoint = edgeB.endpoint
        let elsewhere = ShowroomError.channelElsewhere("channel live is placed on edge b; join it there", redirect: redirect)

        driver.apply(driver.state.edgeEvent(.connectionClosed(channel: "live", reason: elsewhere), on: a, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "live").suffix(1), ["reconnecting closedByEdge"])
        XCTAssertTrue(driver.placements.isEmpty, "the redirect names the edge: no placement is asked")
        XCTAssertFalse(driver.events.contains { if case .connectionClosed = $0 { true } else { false } },
                       "the app's connection is not closed: it reconnects")
        let b = try XCTUnwrap(driver.serial(of: edgeB))
        driver.openSession(b)
        let rejoin = try XCTUnwrap(driver.sent.first { $0.session == b && $0.request.kind == .join }?.request)
        guard case .join("live", let uid, let token, let role, _) = rejoin else { return XCTFail("sent \(rejoin)") }
        XCTAssertEqual(uid, 7)
        XCTAssertEqual(token, "token-live")
        XCTAssertEqual(role, .broadcaster)
        driver.acceptJoin("live", on: b, role: .broadcaster)
        XCTAssertEqual(driver.transitions(of: "live").suffix(2), ["reconnecting closedByEdge", "connected rejoinSucceeded"])
        XCTAssertEqual(driver.state.connections["live"]?.edgeEndpoint, edgeB.endpoint)
        XCTAssertEqual(driver.transitions(of: "other"), ["connecting joining", "connected joinSucceeded"], "the other channel stays")

        // The placed edge refuses too: the rejoin falls back to the placement after its backoff.
        driver.apply(driver.state.edgeEvent(.connectionClosed(channel: "other", reason: elsewhere), on: a, now: driver.now))
        driver.answer(.failure(.unavailable("edge b is full"))) { request, session in request.kind == .join && session == b }
        driver.advance(by: .seconds(2))
        XCTAssertEqual(driver.placements.last?.channel, "other")
        XCTAssertEqual(driver.transitions(of: "other").last, "reconnecting closedByEdge")
    }

    func testWithoutRejoinAForgottenConnectionFailsWithTheEdgesReason() throws {
        var driver = EngineStateDriver(rejoinWindow: .zero)
        join(&driver, "live", on: edgeA, role: .broadcaster)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        let notJoined = ShowroomError(.notJoined, "this session is not connected to channel live; join it first")
        driver.apply(driver.state.edgeEvent(.error(notJoined, channel: "live", track: .video), on: a, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "live").last, "failed closedByEdge")
        XCTAssertNil(driver.state.connections["live"])
        XCTAssertTrue(driver.events.contains { if case .connectionClosed(_, let error) = $0 { error.code == .notJoined } else { false } })
    }

    func testARejoinBacksOffWhileNoEdgeIsThereAndGivesUpOnARefusalNoEdgeWouldLift() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        driver.apply(driver.state.linkBroke(a, now: driver.now))
        let first = try XCTUnwrap(driver.placements.last)
        driver.apply(driver.state.placed(channel: "room-1", first.purpose, .failure(.unavailable("no edge")), now: driver.now))
        XCTAssertEqual(driver.placements.count, 1, "the next attempt waits for the backoff")
        XCTAssertTrue(driver.events.contains { if case .error(let connection?, let error) = $0 { connection.channel == "room-1" && error.message == "no edge" } else { false } },
                      "the app hears why the attempt failed")
        XCTAssertEqual(driver.transitions(of: "room-1").last, "reconnecting edgeLost", "and the connection stays reconnecting")
        // A late answer to the first attempt changes nothing once a second is under way.
        driver.advance(by: .seconds(2))
        XCTAssertEqual(driver.placements.count, 2)
        driver.apply(driver.state.placed(channel: "room-1", first.purpose, .success(edgeC), now: driver.now))
        XCTAssertNil(driver.serial(of: edgeC))

        let second = try XCTUnwrap(driver.placements.last)
        driver.apply(driver.state.placed(channel: "room-1", second.purpose, .success(edgeB), now: driver.now))
        let b = try XCTUnwrap(driver.serial(of: edgeB))
        driver.openSession(b)
        driver.answer(.failure(ShowroomError(.tokenExpired, "expired"))) { request, _ in request.kind == .join }
        XCTAssertEqual(driver.transitions(of: "room-1").last, "failed joinFailed")
        XCTAssertNil(driver.state.connections["room-1"])
        XCTAssertTrue(driver.events.contains { if case .connectionClosed(_, let error) = $0 { error.code == .tokenExpired } else { false } })
        XCTAssertEqual(driver.waiting(on: b), ["closeSession"], "the session it opened for the rejoin is let go")
        driver.advance(by: .seconds(30))
        XCTAssertEqual(driver.placements.count, 2, "given up: no more attempts")
    }

    func testAChannelPreloadedOnAnEdgeThatFailedSinceIsNotJoinedThereButPlacedAgain() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        driver.apply(driver.state.linkBroke(a, now: driver.now))
        driver.advance(by: .seconds(1))
        func joinPreloaded(_ driver: inout EngineStateDriver, _ channel: String, on edge: EdgeAddress) -> EngineTicket {
            let ticket = driver.ticket()
            driver.apply(driver.state.join(
                token: "token", connection: ChannelConnection(channel: channel, uid: 7), options: ChannelMediaOptions(role: .audience),
                edge: edge, preloaded: true, primary: false, ticket: ticket, now: driver.now))
            return ticket
        }
        // Preloaded on edge A before it failed: refused at once (the caller asks the cluster).
        let refused = joinPreloaded(&driver, "room-2", on: edgeA)
        guard case .failure(let error)? = driver.completed[refused] else { return XCTFail("\(String(describing: driver.completed[refused]))") }
        XCTAssertEqual(error.code, .unavailable)
        XCTAssertTrue(error.message.contains("failed 1000 ms ago"), error.message)
        XCTAssertNil(driver.state.connections["room-2"])
        XCTAssertTrue(driver.transitions(of: "room-2").isEmpty, "no connecting for a join that never started")
        // A preload on another edge, and a join the cluster placed on edge A, go ahead.
        let elsewhere = joinPreloaded(&driver, "room-3", on: edgeB)
        XCTAssertNil(driver.completed[elsewhere])
        XCTAssertEqual(driver.transitions(of: "room-3"), ["connecting joining"])
        join(&driver, "room-4", on: edgeA)
        XCTAssertEqual(driver.state.connections["room-4"]?.isJoined, true)
        // Past the memory, edge A is trusted again.
        driver.advance(by: EngineState.failedEdgeMemory)
        let later = joinPreloaded(&driver, "room-5", on: edgeA)
        XCTAssertNil(driver.completed[later])
        XCTAssertEqual(driver.transitions(of: "room-5"), ["connecting joining"])
    }

    func testAnEdgeThatSaysItDrainsIsNotJoinedForAPreload() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        driver.apply(driver.state.edgeEvent(.draining(within: .seconds(5)), on: a, now: driver.now))
        let ticket = driver.ticket()
        driver.apply(driver.state.join(
            token: "token", connection: ChannelConnection(channel: "room-2", uid: 7), options: ChannelMediaOptions(role: .audience),
            edge: edgeA, preloaded: true, primary: false, ticket: ticket, now: driver.now))
        guard case .failure(let error)? = driver.completed[ticket] else { return XCTFail("\(String(describing: driver.completed[ticket]))") }
        XCTAssertEqual(error.code, .unavailable)
    }

    func testARejoinGivesUpOnceItsWindowHasPassed() throws {
        var driver = EngineStateDriver(rejoinWindow: .seconds(3))
        join(&driver, "room-1", on: edgeA)
        driver.apply(driver.state.linkBroke(try XCTUnwrap(driver.serial(of: edgeA)), now: driver.now))
        for _ in 0..<20 {
            guard let placement = driver.placements.last, driver.state.connections["room-1"] != nil else { break }
            driver.apply(driver.state.placed(channel: "room-1", placement.purpose, .failure(.unavailable("no edge")), now: driver.now))
            driver.advance(by: .seconds(1))
        }
        XCTAssertNil(driver.state.connections["room-1"])
        XCTAssertEqual(driver.transitions(of: "room-1").last, "failed edgeLost")
    }

    func testAJoinFollowsOneRedirectAndNoMore() throws {
        var driver = EngineStateDriver()
        let ticket = driver.ticket()
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-1", uid: 7), options: ChannelMediaOptions(role: .audience),
            edge: edgeA, primary: true, ticket: ticket, now: driver.now))
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        driver.openSession(a)
        func elsewhere(_ edge: EdgeAddress) -> ShowroomError {
            var redirect = WireRedirect()
            redirect.edgeID = edge.id
            redirect.clientEndpoint = edge.endpoint
            return .channelElsewhere("hosted elsewhere", redirect: redirect)
        }
        driver.answer(.failure(elsewhere(edgeB))) { request, _ in request.kind == .join }
        XCTAssertEqual(driver.waiting(on: a), ["closeSession"], "the first edge is let go")
        let b = try XCTUnwrap(driver.serial(of: edgeB))
        driver.openSession(b)
        driver.answer(.failure(elsewhere(edgeC))) { request, session in request.kind == .join && session == b }
        XCTAssertNil(driver.serial(of: edgeC), "one redirect per join: no loops")
        XCTAssertEqual(driver.completed[ticket]?.failure?.code, .channelElsewhere)
        XCTAssertEqual(driver.transitions(of: "room-1"), ["connecting joining", "failed joinFailed"])
        XCTAssertNil(driver.state.primaryChannel)
    }

    func testShutdownWhileJoiningEndsTheJoinAndWaitsForEverySessionToClose() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        let joining = driver.ticket()
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-2", uid: 7), options: ChannelMediaOptions(role: .audience),
            edge: edgeB, primary: false, ticket: joining, now: driver.now))
        let b = try XCTUnwrap(driver.serial(of: edgeB))

        let shutdown = driver.ticket()
        driver.apply(driver.state.shutdown(ticket: shutdown, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "room-1").last, "disconnected left")
        XCTAssertEqual(driver.completed[joining]?.failure?.code, .unavailable, "the join waiting for its session fails")
        XCTAssertEqual(driver.closed, [b], "the session still opening closes at once")
        XCTAssertEqual(driver.waiting(on: a), ["closeSession"])
        XCTAssertNil(driver.completed[shutdown], "done only once the open session answered")
        driver.answer(.success(.sessionClosed)) { request, _ in request.kind == .closeSession }
        XCTAssertNotNil(driver.completed[shutdown])
        XCTAssertTrue(driver.state.sessions.isEmpty)

        let late = driver.ticket()
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-3", uid: 7), options: ChannelMediaOptions(),
            edge: edgeA, primary: false, ticket: late, now: driver.now))
        XCTAssertEqual(driver.completed[late]?.failure?.code, .unavailable)
    }

    func testADrainMovesAViewerOnTheNewEdgesFirstKeyframeAndABroadcasterAtOnceWithNoStateChange() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        driver.state.setVideoSink(channel: "room-1", uid: 100, present: true)
        join(&driver, "room-2", on: edgeA, role: .broadcaster)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        let reported = driver.events.count

        driver.apply(driver.state.edgeEvent(.draining(within: .seconds(5)), on: a, now: driver.now))
        XCTAssertEqual(driver.placements.map(\.channel), ["room-1", "room-2"])
        XCTAssertTrue(driver.placements.allSatisfy { $0.avoiding == edgeA })
        for placement in driver.placements {
            driver.apply(driver.state.placed(channel: placement.channel, placement.purpose, .success(edgeB), now: driver.now))
        }
        // A new join never goes to the draining edge.
        let refused = driver.ticket()
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-9", uid: 7), options: ChannelMediaOptions(),
            edge: edgeA, primary: false, ticket: refused, now: driver.now))
        XCTAssertEqual(driver.completed[refused]?.failure?.code, .unavailable)

        let b = try XCTUnwrap(driver.serial(of: edgeB))
        driver.openSession(b)
        driver.acceptJoin("room-1", on: b)
        driver.acceptJoin("room-2", on: b, role: .broadcaster)
        // The broadcaster switched at once and stays on the old edge for the viewers not moved yet.
        XCTAssertEqual(driver.state.connections["room-2"]?.edge, edgeB)
        XCTAssertEqual(driver.state.connections["room-2"]?.lingeringOn, edgeA)
        XCTAssertEqual(driver.movedOut, [], "the viewer has not moved yet")
        // The viewer takes frames from the old edge until the new edge's first keyframe.
        XCTAssertEqual(driver.state.connections["room-1"]?.edge, edgeA)
        guard case .drop = driver.state.mediaArrived(channel: "room-1", from: b, isKeyframe: false) else { return XCTFail("a delta frame from the new edge") }
        guard case .accept = driver.state.mediaArrived(channel: "room-1", from: a, isKeyframe: false) else { return XCTFail("a frame from the old edge") }
        guard case .acceptAfterSwitch(let switched, let connection, _) = driver.state.mediaArrived(channel: "room-1", from: b, isKeyframe: true) else {
            return XCTFail("the new edge's keyframe switches")
        }
        driver.apply(switched)
        XCTAssertEqual(connection, ChannelConnection(channel: "room-1", uid: 7))
        XCTAssertEqual(driver.state.connections["room-1"]?.edge, edgeB)
        guard case .drop = driver.state.mediaArrived(channel: "room-1", from: a, isKeyframe: true) else { return XCTFail("the old edge after the switch") }
        driver.answer(.success(.left(channel: "room-1"))) { request, session in request.kind == .leave && session == a }
        XCTAssertEqual(driver.movedOut, [a], "every connection of the session has moved")
        XCTAssertEqual(driver.state.moves, 2)
        XCTAssertFalse(driver.events[reported...].contains { if case .connectionStateChanged(let connection, _, _) = $0 { connection.channel != "room-9" } else { false } },
                       "the app sees no state change: \(driver.events[reported...])")

        // The old edge closes the session: the broadcaster stops lingering, nothing rejoins.
        driver.apply(driver.state.edgeEvent(.sessionClosed(reason: .unavailable("drained")), on: a, now: driver.now))
        XCTAssertNil(driver.state.connections["room-2"]?.lingeringOn)
        XCTAssertEqual(driver.placements.count, 2)
        XCTAssertEqual(driver.transitions(of: "room-2").last, "connected joinSucceeded")
    }

    func testAViewerWhoseMoveFindsNoEdgeStaysAndSwitchesAfterTheTimeoutOtherwise() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        driver.state.setVideoSink(channel: "room-1", uid: 100, present: true)
        join(&driver, "room-2", on: edgeA)
        driver.state.setVideoSink(channel: "room-2", uid: 100, present: true)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        driver.apply(driver.state.edgeEvent(.draining(within: .seconds(5)), on: a, now: driver.now))
        let (one, two) = (driver.placements[0], driver.placements[1])
        driver.apply(driver.state.placed(channel: "room-1", one.purpose, .failure(.unavailable("no other edge")), now: driver.now))
        XCTAssertEqual(driver.state.connections["room-1"]?.staysUntilClose, true)
        XCTAssertEqual(driver.movedOut, [], "room-2 may still move")
        driver.apply(driver.state.placed(channel: "room-2", two.purpose, .success(edgeB), now: driver.now))
        let b = try XCTUnwrap(driver.serial(of: edgeB))
        driver.openSession(b)
        driver.acceptJoin("room-2", on: b)
        // No keyframe from the new edge (its host is away): the switch comes after the bounded wait.
        driver.advance(by: .seconds(2))
        XCTAssertEqual(driver.state.connections["room-2"]?.edge, edgeB)
        driver.answer(.success(.left(channel: "room-2"))) { request, session in request.kind == .leave && session == a }
        XCTAssertEqual(driver.movedOut, [a])
    }

    func testWarmEdgesAreTheOpenSessionsThatTakeJoinsBusiestFirst() throws {
        var driver = EngineStateDriver()
        XCTAssertEqual(driver.state.warmEdges, [])
        join(&driver, "room-1", on: edgeA)
        join(&driver, "room-2", on: edgeB)
        join(&driver, "room-3", on: edgeB)
        XCTAssertEqual(driver.state.warmEdges, ["edge-b", "edge-a"])
        // A session still opening is not warm; a draining one takes no join.
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-4", uid: 7), options: ChannelMediaOptions(),
            edge: edgeC, primary: false, ticket: driver.ticket(), now: driver.now))
        driver.apply(driver.state.edgeEvent(.draining(within: .seconds(5)), on: try XCTUnwrap(driver.serial(of: edgeB)), now: driver.now))
        XCTAssertEqual(driver.state.warmEdges, ["edge-a"])
    }

    func testPublishingChangedAheadOfTheEdgesAnswerIsPutBackOnARefusal() throws {
        var driver = EngineStateDriver()
        join(&driver, "call-1", on: edgeA, role: .broadcaster)
        driver.apply(driver.state.accepted(.options(ChannelMediaOptions(publishAudio: false, publishVideo: false)), channel: "call-1"))
        let quiet = try XCTUnwrap(driver.state.connections["call-1"])
        XCTAssertFalse(quiet.sends(.video))
        // The callee accepts: video goes out at once, before the edge answered the update.
        driver.apply(driver.state.accepted(.options(ChannelMediaOptions(publishAudio: true, publishVideo: true)), channel: "call-1"))
        XCTAssertTrue(try XCTUnwrap(driver.state.connections["call-1"]).sends(.video))
        // Refused: back to what it was.
        let directives = driver.state.restore(quiet.options, publishesAsAudience: quiet.publishesAsAudience, channel: "call-1")
        XCTAssertFalse(try XCTUnwrap(driver.state.connections["call-1"]).sends(.video))
        XCTAssertTrue(directives.contains { if case .refreshPublishing = $0 { true } else { false } })
        XCTAssertTrue(driver.state.restore(quiet.options, publishesAsAudience: false, channel: "left").isEmpty)
    }

    func testEventsCountFromTheEdgeThatServesTheConnection() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        join(&driver, "room-2", on: edgeB)
        let (a, b) = (try XCTUnwrap(driver.serial(of: edgeA)), try XCTUnwrap(driver.serial(of: edgeB)))
        driver.apply(driver.state.edgeEvent(.userJoined(channel: "room-1", uid: 100), on: b, now: driver.now))
        driver.apply(driver.state.edgeEvent(.userJoined(channel: "room-1", uid: 101), on: a, now: driver.now))
        let joined = driver.events.compactMap { if case .userJoined(_, let uid) = $0 { uid } else { nil } }
        XCTAssertEqual(joined, [101])
        // The edge closes one connection: it fails, the session (now empty) closes, the other stays.
        driver.apply(driver.state.edgeEvent(.connectionClosed(channel: "room-1", reason: ShowroomError(.banned, "kicked")), on: a, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "room-1").last, "failed closedByEdge")
        XCTAssertEqual(driver.waiting(on: a), ["closeSession"])
        XCTAssertNotNil(driver.state.connections["room-2"])
        // A session replaced by another client stays closed: its connection fails, nothing rejoins.
        driver.apply(driver.state.edgeEvent(.sessionClosed(reason: ShowroomError(.sessionReplaced, "replaced")), on: b, now: driver.now))
        XCTAssertEqual(driver.transitions(of: "room-2").last, "failed closedByEdge")
        XCTAssertTrue(driver.placements.isEmpty)
    }

    func testAnEdgeThatAnswersOrTellsNonsenseFailsOnlyWhatItConcerns() throws {
        var driver = EngineStateDriver()
        join(&driver, "room-1", on: edgeA)
        let a = try XCTUnwrap(driver.serial(of: edgeA))
        let before = driver.events.count
        // Events about channels this engine does not hold, and from a session it does not have.
        driver.apply(driver.state.edgeEvent(.userJoined(channel: "not-mine", uid: 5), on: a, now: driver.now))
        driver.apply(driver.state.edgeEvent(.connectionClosed(channel: "not-mine", reason: ShowroomError(.banned, "x")), on: a, now: driver.now))
        driver.apply(driver.state.edgeEvent(.userJoined(channel: "room-1", uid: 5), on: SessionSerial(value: 999), now: driver.now))
        XCTAssertEqual(driver.events.count, before)
        XCTAssertNotNil(driver.state.connections["room-1"])
        // Answers for a session or an attempt that does not exist change nothing.
        driver.apply(driver.state.answered(.join(channel: "room-1", .rejoin(attempt: 12345, redirected: false)), on: a,
                                           .success(.joined(channel: "room-1", uid: 9, connection: ConnectionID(2), role: .broadcaster)), now: driver.now))
        driver.apply(driver.state.answered(.openSession, on: SessionSerial(value: 999), .success(.done), now: driver.now))
        driver.apply(driver.state.fired(.rejoinRetry(channel: "room-1", attempt: 12345), now: driver.now))
        XCTAssertEqual(driver.state.connections["room-1"]?.connection.uid, 7)
        XCTAssertEqual(driver.state.connections["room-1"]?.role, .audience)
        XCTAssertTrue(driver.placements.isEmpty)
        // A join answered with the wrong message fails that join alone, as malformed.
        let ticket = driver.ticket()
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-2", uid: 7), options: ChannelMediaOptions(role: .audience),
            edge: edgeA, primary: false, ticket: ticket, now: driver.now))
        driver.answer(.success(.left(channel: "room-2"))) { request, _ in request.kind == .join }
        XCTAssertEqual(driver.completed[ticket]?.failure?.code, .malformedMessage)
        XCTAssertNil(driver.state.connections["room-2"])
        XCTAssertNotNil(driver.state.connections["room-1"])
        // A session answer that is not one fails the session's joins with it.
        let other = driver.ticket()
        driver.apply(driver.state.join(
            token: "t", connection: ChannelConnection(channel: "room-3", uid: 7), options: ChannelMediaOptions(role: .audience),
            edge: edgeB, primary: false, ticket: other, now: driver.now))
        driver.answer(.success(.done)) { request, _ in request.kind == .openSession }
        XCTAssertEqual(driver.completed[other]?.failure?.code, .malformedMessage)
        XCTAssertEqual(driver.closed, [try XCTUnwrap(driver.serial(of: edgeB))])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
