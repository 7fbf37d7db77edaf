import CallAPI
import Calls
import XCTest

/// The call book with plain values and a clock that is a number.
final class CallBookTests: XCTestCase {
    let viewer: UInt32 = 2001
    let host: UInt32 = 1001
    let t0: Int64 = 1_000_000

    /// The notices of `directives` for `uid`, as (state, reason, event).
    func told(_ uid: UInt32, _ directives: [CallDirective]) -> [(CallState, CallStateReason, CallEvent)] {
        directives.compactMap {
            guard case .notify(let notice) = $0, notice.to == uid else { return nil }
            return (notice.state, notice.reason, notice.event)
        }
    }

    func assertTold(_ uid: UInt32, _ directives: [CallDirective], _ expected: [(CallState, CallStateReason, CallEvent)],
                    file: StaticString = #filePath, line: UInt = #line) {
        let got = told(uid, directives)
        XCTAssertEqual(got.map { "\($0.0) \($0.1) \($0.2)" }, expected.map { "\($0.0) \($0.1) \($0.2)" },
                       "notices to \(uid)", file: file, line: line)
    }

    func ring(_ book: inout CallBook, id: String = "c1", from: UInt32? = nil, to: UInt32? = nil,
              waits: Bool = true, at now: Int64? = nil) throws -> [CallDirective] {
        try book.call(id: id, channel: "call-\(id)", from: from ?? viewer, to: to ?? host, type: .video,
                      waitsForFirstFrame: waits, calleeOnline: true, nowMs: now ?? t0).directives
    }

    func testNumbersAreCallAPIs() {
        XCTAssertEqual([CallState.idle, .prepared, .calling, .connecting, .connected, .failed].map(\.rawValue), [0, 1, 2, 3, 4, 10])
        XCTAssertEqual(CallStateReason.remoteRejected.rawValue, 6)
        XCTAssertEqual(CallStateReason.callingTimeout.rawValue, 14)
        XCTAssertEqual(CallStateReason.remoteCallBusy.rawValue, 17)
        XCTAssertEqual(CallStateReason.remoteCallingTimeout.rawValue, 18)
        XCTAssertEqual(CallEvent.remoteUserRecvCall.rawValue, 99)
        XCTAssertEqual(CallEvent.remoteLeft.rawValue, 108)
    }

    func testTheHappyPathConnectsOnceBothSidesDecodedEachOther() throws {
        var book = CallBook()
        let rang = try ring(&book)
        assertTold(viewer, rang, [(.calling, .none, .remoteUserRecvCall)])
        assertTold(host, rang, [(.calling, .none, .none)])
        XCTAssertEqual(book.call(of: host)?.id, "c1")

        let accepted = try book.accept("c1", by: host, nowMs: t0 + 500)
        assertTold(host, accepted, [(.connecting, .localAccepted, .localAccepted)])
        assertTold(viewer, accepted, [(.connecting, .remoteAccepted, .remoteAccepted)])

        XCTAssertTrue(try book.firstFrameDecoded("c1", by: viewer, nowMs: t0 + 600).isEmpty, "one side is not enough")
        let connected = try book.firstFrameDecoded("c1", by: host, nowMs: t0 + 650)
        assertTold(viewer, connected, [(.connected, .recvRemoteFirstFrame, .recvRemoteFirstFrame)])
        assertTold(host, connected, [(.connected, .recvRemoteFirstFrame, .recvRemoteFirstFrame)])
        XCTAssertTrue(connected.contains { if case .connected = $0 { true } else { false } })

        // Connected calls have no calling timer.
        XCTAssertTrue(book.tick(nowMs: t0 + 60_000).isEmpty)
        let hungUp = try book.hangup("c1", by: viewer, reason: "bye", nowMs: t0 + 70_000)
        assertTold(viewer, hungUp, [(.prepared, .localHangup, .localHangup)])
        assertTold(host, hungUp, [(.prepared, .remoteHangup, .remoteHangup)])
        XCTAssertTrue(hungUp.contains(.seal(channel: "call-c1", parties: [viewer, host])))
        let ended = try XCTUnwrap(hungUp.compactMap { if case .ended(let call) = $0 { call } else { nil } }.first)
        XCTAssertEqual(ended.end, .init(reason: .hungUp, by: viewer, message: "bye"))
        XCTAssertEqual(ended.connectedDurationMs, 70_000 - 650)
        XCTAssertNil(book.call(of: viewer))
        XCTAssertNil(book.call(of: host))
    }

    func testSequencesGrowAcrossEveryNoticeOfACall() throws {
        var book = CallBook()
        var all = try ring(&book)
        all += try book.accept("c1", by: host, nowMs: t0)
        all += try book.hangup("c1", by: host, nowMs: t0)
        let sequences = all.compactMap { if case .notify(let notice) = $0 { notice.sequence } else { nil } }
        XCTAssertEqual(sequences, Array(1...UInt64(sequences.count)))
    }

    func testWithoutFirstFrameWaitingAcceptConnects() throws {
        var book = CallBook()
        _ = try ring(&book, waits: false)
        let accepted = try book.accept("c1", by: host, nowMs: t0)
        assertTold(viewer, accepted, [(.connecting, .remoteAccepted, .remoteAccepted), (.connected, .none, .none)])
    }

    func testAnOfflineCalleeIsRefusedAtOnce() {
        var book = CallBook()
        XCTAssertThrowsError(try book.call(id: "c1", channel: "x", from: viewer, to: host, type: .audio,
                                           calleeOnline: false, nowMs: t0)) { error in
            XCTAssertEqual((error as? CallRefusal)?.code, .calleeOffline)
        }
        XCTAssertNil(book.call(of: viewer))
    }

    func testACalleeInACallIsBusyAndTheOtherCallNeverRings() throws {
        var book = CallBook()
        _ = try ring(&book)
        let other: UInt32 = 3001
        let (busy, directives) = try book.call(id: "c2", channel: "call-c2", from: other, to: host, type: .video,
                                               calleeOnline: true, nowMs: t0 + 1)
        XCTAssertEqual(busy.end?.reason, .busy)
        assertTold(other, directives, [(.prepared, .remoteCallBusy, .remoteCallBusy)])
        XCTAssertTrue(told(host, directives).isEmpty, "the busy callee hears nothing")
        XCTAssertEqual(book.call(of: host)?.id, "c1")
        XCTAssertNil(book.call(of: other))
    }

    func testTwoCallersRacingForOneHostRingOnce() throws {
        var book = CallBook()
        var rang: [UInt32] = []
        var busy: [UInt32] = []
        for (n, caller) in [UInt32(11), 12, 13, 14].enumerated() {
            let (call, _) = try book.call(id: "c\(n)", channel: "ch\(n)", from: caller, to: host, type: .video,
                                          calleeOnline: true, nowMs: t0)
            if call.end?.reason == .busy { busy.append(caller) } else { rang.append(caller) }
        }
        XCTAssertEqual(rang, [11])
        XCTAssertEqual(busy, [12, 13, 14])
    }

    func testTheTimerEndsBothSidesOnceWithTheirReasons() throws {
        var book = CallBook()
        _ = try ring(&book)
        XCTAssertTrue(book.tick(nowMs: t0 + 14_999).isEmpty)
        let ended = book.tick(nowMs: t0 + 15_000)
        assertTold(viewer, ended, [(.prepared, .callingTimeout, .callingTimeout)])
        assertTold(host, ended, [(.prepared, .remoteCallingTimeout, .remoteCallingTimeout)])
        XCTAssertTrue(book.tick(nowMs: t0 + 16_000).isEmpty, "ended once")
        // A hang-up that comes after the timeout is told what happened.
        XCTAssertThrowsError(try book.hangup("c1", by: host, nowMs: t0 + 16_000)) { error in
            XCTAssertEqual((error as? CallRefusal)?.code, .callEnded)
            XCTAssertTrue((error as? CallRefusal)?.message.contains("timedOut") ?? false)
        }
    }

    func testTheTimerCoversConnectingToo() throws {
        var book = CallBook()
        _ = try ring(&book)
        _ = try book.accept("c1", by: host, nowMs: t0 + 1_000)
        let ended = book.tick(nowMs: t0 + 15_000)
        assertTold(viewer, ended, [(.prepared, .callingTimeout, .callingTimeout)])
    }

    func testACallMayNameItsOwnTimeoutWithinBounds() throws {
        var book = CallBook()
        _ = try book.call(id: "c1", channel: "x", from: viewer, to: host, type: .video, timeoutMs: 2_000,
                          calleeOnline: true, nowMs: t0)
        XCTAssertFalse(book.tick(nowMs: t0 + 2_000).isEmpty)
        XCTAssertThrowsError(try book.call(id: "c2", channel: "y", from: viewer, to: host, type: .video,
                                           timeoutMs: -1, calleeOnline: true, nowMs: t0))
    }

    func testCancelAgainstAcceptEndsTheSameForBothWhicheverComesFirst() throws {
        // Cancel first: the accept is refused.
        var book = CallBook()
        _ = try ring(&book)
        let cancelled = try book.cancel("c1", by: viewer, nowMs: t0 + 1)
        assertTold(viewer, cancelled, [(.prepared, .localCancelled, .localCancelled)])
        assertTold(host, cancelled, [(.prepared, .remoteCancelled, .remoteCancelled)])
        XCTAssertThrowsError(try book.accept("c1", by: host, nowMs: t0 + 2)) { error in
            XCTAssertEqual((error as? CallRefusal)?.code, .callEnded)
        }
        // Accept first: the cancel is refused and the call goes on.
        var other = CallBook()
        _ = try ring(&other)
        _ = try other.accept("c1", by: host, nowMs: t0 + 1)
        XCTAssertThrowsError(try other.cancel("c1", by: viewer, nowMs: t0 + 2)) { error in
            XCTAssertEqual((error as? CallRefusal)?.code, .stateMismatch)
        }
        XCTAssertEqual(other.call(of: viewer)?.phase, .connecting)
    }

    func testASecondAcceptChangesNothing() throws {
        var book = CallBook()
        _ = try ring(&book)
        _ = try book.accept("c1", by: host, nowMs: t0)
        XCTAssertTrue(try book.accept("c1", by: host, nowMs: t0 + 1).isEmpty)
        XCTAssertEqual(book.calls["c1"]?.acceptedAtMs, t0)
    }

    func testARepeatedCallIsTheSameCallAndNeverRegressesAConnectedOne() throws {
        var book = CallBook()
        _ = try ring(&book)
        let (again, directives) = try book.call(id: "c9", channel: "call-c9", from: viewer, to: host, type: .video,
                                                calleeOnline: true, nowMs: t0 + 1)
        XCTAssertEqual(again.id, "c1")
        XCTAssertTrue(directives.isEmpty)
        _ = try book.accept("c1", by: host, nowMs: t0 + 2)
        _ = try book.firstFrameDecoded("c1", by: host, nowMs: t0 + 3)
        _ = try book.firstFrameDecoded("c1", by: viewer, nowMs: t0 + 3)
        XCTAssertThrowsError(try ring(&book, id: "c10")) { error in
            XCTAssertEqual((error as? CallRefusal)?.code, .callerInCall)
        }
        XCTAssertEqual(book.calls["c1"]?.phase, .connected)
    }

    func testRejectCarriesItsReason() throws {
        var book = CallBook()
        _ = try ring(&book)
        let rejected = try book.reject("c1", by: host, reason: "not now", nowMs: t0)
        assertTold(host, rejected, [(.prepared, .localRejected, .localRejected)])
        assertTold(viewer, rejected, [(.prepared, .remoteRejected, .remoteRejected)])
        XCTAssertEqual(book.calls["c1"]?.end?.message, "not now")
    }

    func testHangupWhileRingingIsCancelOrReject() throws {
        var book = CallBook()
        _ = try ring(&book)
        assertTold(host, try book.hangup("c1", by: viewer, nowMs: t0), [(.prepared, .remoteCancelled, .remoteCancelled)])
        _ = try ring(&book, id: "c2")
        assertTold(viewer, try book.hangup("c2", by: host, nowMs: t0), [(.prepared, .remoteRejected, .remoteRejected)])
    }

    func testOnlyThePartiesMayActAndOnlyInTheirRole() throws {
        var book = CallBook()
        _ = try ring(&book)
        let stranger: UInt32 = 666
        for attempt in [
            { try book.accept("c1", by: stranger, nowMs: self.t0) },
            { try book.hangup("c1", by: stranger, nowMs: self.t0) },
            { try book.accept("c1", by: self.viewer, nowMs: self.t0) },
            { try book.cancel("c1", by: self.host, nowMs: self.t0) },
            { try book.reject("c1", by: self.viewer, nowMs: self.t0) },
        ] as [() throws -> [CallDirective]] {
            XCTAssertThrowsError(try attempt()) { error in
                XCTAssertEqual((error as? CallRefusal)?.code, .notYourCall)
            }
        }
        XCTAssertThrowsError(try book.accept("no-such-call", by: host, nowMs: t0)) { error in
            XCTAssertEqual((error as? CallRefusal)?.code, .unknownCall)
        }
        XCTAssertEqual(book.calls["c1"]?.phase, .ringing, "nothing changed")
    }

    func testHostileInputIsRefused() {
        var book = CallBook()
        let huge = Dictionary(uniqueKeysWithValues: (0..<100).map { ("k\($0)", "v") })
        for (caller, callee, info) in [(UInt32(0), host, [String: String]()), (viewer, viewer, [:]), (viewer, host, huge),
                                       (viewer, host, ["k": String(repeating: "x", count: 5_000)])] {
            XCTAssertThrowsError(try book.call(id: "c1", channel: "x", from: caller, to: callee, type: .video,
                                               extensionInfo: info, calleeOnline: true, nowMs: t0)) { error in
                XCTAssertEqual((error as? CallRefusal)?.code, .invalidArgument)
                XCTAssertFalse((error as? CallRefusal)?.message.isEmpty ?? true)
            }
        }
        XCTAssertTrue(book.calls.isEmpty)
    }

    func testAPartyThatLeavesIsWaitedForThenKicked() throws {
        var book = CallBook()
        _ = try ring(&book, waits: false)
        _ = try book.accept("c1", by: host, nowMs: t0)
        let left = book.partyLeft("c1", uid: viewer, nowMs: t0 + 1_000)
        assertTold(host, left, [(.connected, .none, .remoteLeft)])
        XCTAssertTrue(book.partyLeft("c1", uid: viewer, nowMs: t0 + 2_000).isEmpty, "reported once")
        XCTAssertTrue(book.tick(nowMs: t0 + 30_999).isEmpty, "still within the grace")
        let ended = book.tick(nowMs: t0 + 31_000)
        assertTold(host, ended, [(.prepared, .remoteHangup, .remoteHangup)])
        assertTold(viewer, ended, [(.prepared, .localHangup, .localLeft)])
        // The leaver is shut out of the channel (with the other party: the call is over).
        XCTAssertTrue(ended.contains(.seal(channel: "call-c1", parties: [viewer, host])))
    }

    func testBothPartiesAwaySinceTheSameTimeEndTheCallOneWayWhateverTheTablesOrder() throws {
        // Hash order differs from process to process: the same call must end the same way in each.
        var book = CallBook()
        _ = try ring(&book, waits: false)
        _ = try book.accept("c1", by: host, nowMs: t0)
        _ = book.partyLeft("c1", uid: viewer, nowMs: t0 + 1_000)
        _ = book.partyLeft("c1", uid: host, nowMs: t0 + 1_000)
        _ = book.tick(nowMs: t0 + 31_000)
        XCTAssertEqual(book.calls["c1"]?.end?.by, min(host, viewer), "the lower uid is the leaver")
    }

    func testAPartyBackWithinTheGraceContinuesTheCall() throws {
        var book = CallBook()
        _ = try ring(&book, waits: false)
        _ = try book.accept("c1", by: host, nowMs: t0)
        _ = book.partyLeft("c1", uid: host, nowMs: t0 + 1_000)
        let back = book.partyJoined("c1", uid: host, nowMs: t0 + 20_000)
        assertTold(viewer, back, [(.connected, .none, .remoteJoined)])
        XCTAssertTrue(book.tick(nowMs: t0 + 40_000).isEmpty)
        XCTAssertEqual(book.calls["c1"]?.phase, .connected)
    }

    func testEndedCallsAreForgottenAfterAWhile() throws {
        var book = CallBook()
        _ = try ring(&book)
        _ = try book.cancel("c1", by: viewer, nowMs: t0)
        _ = book.tick(nowMs: t0 + 59_999)
        XCTAssertNotNil(book.calls["c1"])
        _ = book.tick(nowMs: t0 + 60_000)
        XCTAssertNil(book.calls["c1"])
    }

    func testAClientTakesEachNoticeOnceInOrder() {
        var filter = CallNoticeFilter()
        XCTAssertTrue(filter.take(callID: "c1", sequence: 1))
        XCTAssertFalse(filter.take(callID: "c1", sequence: 1), "repeated")
        XCTAssertTrue(filter.take(callID: "c1", sequence: 3))
        XCTAssertFalse(filter.take(callID: "c1", sequence: 2), "stale")
        XCTAssertTrue(filter.take(callID: "c2", sequence: 1))
        // Bounded: old calls are forgotten.
        for n in 0..<(CallNoticeFilter.remembered + 1) { _ = filter.take(callID: "x\(n)", sequence: 1) }
        XCTAssertTrue(filter.take(callID: "c1", sequence: 1))
    }

    func testAClientTakesACallsEndOnceWhateverItsNumber() {
        var filter = CallNoticeFilter()
        // The other side of a partition numbered the call 1,000 above its owner, which ends it.
        XCTAssertTrue(filter.take(callID: "c1", sequence: 1_005))
        XCTAssertFalse(filter.take(callID: "c1", sequence: 6), "a lower number that is no end stays stale")
        XCTAssertTrue(filter.take(callID: "c1", sequence: 6, ends: true), "an end is final, whatever its number")
        XCTAssertFalse(filter.take(callID: "c1", sequence: 7, ends: true), "taken once")
        XCTAssertFalse(filter.take(callID: "c1", sequence: 1_005), "the numbers seen stay the highest")
        XCTAssertTrue(filter.take(callID: "c1", sequence: 1_006))
        // A peer's number at the top of the range does not trap.
        XCTAssertTrue(filter.take(callID: "c2", sequence: .max))
        XCTAssertTrue(filter.take(callID: "c2", sequence: 0, ends: true))
        XCTAssertTrue([CallState.prepared, .failed, .idle].allSatisfy(\.endsCall))
        XCTAssertFalse([CallState.calling, .connecting, .connected].contains(where: \.endsCall))
    }

    func testAnAdoptedCallKeepsItsTimersAndNumbersPastItsFormerOwner() throws {
        var owner = CallBook()
        _ = try ring(&owner, at: t0)
        let call = try XCTUnwrap(owner.call(of: host))
        var successor = CallBook()
        XCTAssertTrue(successor.adopt(call))
        XCTAssertFalse(successor.adopt(call), "held already")
        XCTAssertEqual(successor.call(of: viewer)?.id, "c1")
        XCTAssertEqual(successor.callOnChannel["call-c1"], "c1")
        // The calling timeout runs from the original start, and numbers jump past the old owner's.
        XCTAssertTrue(successor.tick(nowMs: t0 + 14_999).isEmpty)
        let ended = successor.tick(nowMs: t0 + 15_000)
        assertTold(viewer, ended, [(.prepared, .callingTimeout, .callingTimeout)])
        let sequences = ended.compactMap { if case .notify(let notice) = $0 { notice.sequence } else { nil } }
        XCTAssertTrue(sequences.allSatisfy { $0 > call.sequence + CallBook.adoptedSequenceGap })
        // An ended call is not adopted, nor one whose party is in another call here.
        var fresh = CallBook()
        XCTAssertFalse(fresh.adopt(try XCTUnwrap(successor.calls["c1"])))
        var busy = CallBook()
        _ = try ring(&busy, id: "c2", from: 3001, to: host)
        XCTAssertFalse(busy.adopt(call))
    }

    /// Two copies of call c1 (the two sides of a partition): the one rung `here`, and the one
    /// another book took over `there`, numbered 1 000 above.
    func twoCopies() throws -> (here: CallBook, active: Call, there: CallBook) {
        var here = CallBook()
        _ = try ring(&here, at: t0)
        let active = try XCTUnwrap(here.call(of: host))
        var there = CallBook()
        XCTAssertTrue(there.adopt(active))
        return (here, active, there)
    }

    func testAnEndTakenFromAnotherCopyEndsTheCallHereOnceAndOutlivesALaterActiveCopy() throws {
        // Two copies of one call: one is hung up.
        var (here, active, there) = try twoCopies()
        _ = try there.accept("c1", by: host, nowMs: t0 + 100)
        _ = try there.hangup("c1", by: viewer, nowMs: t0 + 500)
        let ended = try XCTUnwrap(there.calls["c1"])
        XCTAssertEqual(there.latestOwned[host], "c1", "the ended call is still the callee's latest")

        let directives = here.adoptEnd(ended, nowMs: t0 + 1_000)
        assertTold(viewer, directives, [(.prepared, .localHangup, .localHangup)])
        assertTold(host, directives, [(.prepared, .remoteHangup, .remoteHangup)])
        let sequences = directives.compactMap { if case .notify(let notice) = $0 { notice.sequence } else { nil } }
        XCTAssertTrue(sequences.allSatisfy { $0 > ended.sequence }, "numbered past both copies' notices")
        XCTAssertTrue(directives.contains(.seal(channel: "call-c1", parties: [viewer, host])))
        XCTAssertNil(here.call(of: viewer))
        XCTAssertNil(here.call(of: host))
        XCTAssertEqual(here.calls["c1"]?.end?.reason, .hungUp)
        XCTAssertTrue(here.adoptEnd(ended, nowMs: t0 + 1_100).isEmpty, "ended once")
        XCTAssertFalse(here.adopt(active), "an active copy does not come back over the end")

        // A book that never held the call keeps its end, for the callee's record.
        var fresh = CallBook()
        XCTAssertTrue(fresh.adoptEnd(ended, nowMs: t0 + 1_000).isEmpty)
        XCTAssertEqual(fresh.latestOwned[host], "c1")
        XCTAssertFalse(fresh.adopt(active))
        XCTAssertTrue(fresh.tick(nowMs: t0 + 500 + fresh.settings.retainEndedMs).isEmpty)
        XCTAssertNil(fresh.latestOwned[host], "forgotten with the call")
    }

    func testAnotherCopyStillGoingOnMovesTheNumbersOfTheCallHereUpwardsOnly() throws {
        // Two copies of one call, both going on.
        var (here, active, there) = try twoCopies()
        let copy = try XCTUnwrap(there.calls["c1"])
        var elsewhere = CallBook()
        _ = try ring(&elsewhere, from: 3001, at: t0)
        var strangerThere = CallBook()
        XCTAssertTrue(strangerThere.adopt(try XCTUnwrap(elsewhere.call(of: host))))

        XCTAssertFalse(here.numberAbove(try XCTUnwrap(strangerThere.calls["c1"])), "another caller's call of the same id")
        XCTAssertFalse(here.numberAbove(active), "not above")
        XCTAssertTrue(here.numberAbove(copy))
        XCTAssertEqual(here.calls["c1"]?.sequence, copy.sequence)
        XCTAssertFalse(here.numberAbove(active), "never downwards")
        XCTAssertEqual(here.call(of: viewer)?.phase, .ringing, "the call goes on as it was")

        let ended = try here.cancel("c1", by: viewer, nowMs: t0 + 200)
        let sequences = ended.compactMap { if case .notify(let notice) = $0 { notice.sequence } else { nil } }
        XCTAssertEqual(sequences.count, 2)
        XCTAssertTrue(sequences.allSatisfy { $0 > copy.sequence }, "numbered past both copies' notices")
        _ = try there.accept("c1", by: host, nowMs: t0 + 300)
        _ = there.partyLeft("c1", uid: host, nowMs: t0 + 400)
        XCTAssertGreaterThan(try XCTUnwrap(there.calls["c1"]).sequence, try XCTUnwrap(here.calls["c1"]).sequence)
        XCTAssertFalse(here.numberAbove(try XCTUnwrap(there.calls["c1"])), "an ended call keeps its numbers")
        XCTAssertEqual(here.calls["c1"]?.sequence, sequences.max())
    }

    func testAReleasedCallIsForgottenWithoutANotice() throws {
        var book = CallBook()
        _ = try ring(&book)
        book.release("c1")
        XCTAssertNil(book.call(of: viewer))
        XCTAssertNil(book.call(of: host))
        XCTAssertNil(book.callOnChannel["call-c1"])
        XCTAssertTrue(book.tick(nowMs: t0 + 60_000).isEmpty)
    }

    func testTheHostsLiveRoomShowsTheCallFromAcceptToTheEndOnly() throws {
        func rooms(_ directives: [CallDirective]) -> [String] {
            directives.compactMap {
                guard case .interaction(let room, let owner, _, let inCall) = $0 else { return nil }
                return "\(room) \(owner) \(inCall)"
            }
        }
        var book = CallBook()
        let rung = try book.call(id: "c1", channel: "call-c1", from: viewer, to: host, type: .video, callerLiveRoom: "viewer-room",
                                 calleeOnline: true, nowMs: t0).directives
        XCTAssertEqual(rooms(rung), [], "nothing shows while it rings")
        let accepted = try book.accept("c1", by: host, liveRoom: "host-room", nowMs: t0 + 100)
        XCTAssertEqual(rooms(accepted), ["host-room \(host) true", "viewer-room \(viewer) true"])
        let ended = try book.hangup("c1", by: viewer, nowMs: t0 + 5_000)
        XCTAssertEqual(rooms(ended), ["host-room \(host) false", "viewer-room \(viewer) false"])
        // A call rejected while it rang never showed, so nothing clears.
        _ = try book.call(id: "c2", channel: "call-c2", from: viewer, to: host, type: .video, callerLiveRoom: "viewer-room",
                          calleeOnline: true, nowMs: t0 + 6_000)
        XCTAssertEqual(rooms(try book.reject("c2", by: host, nowMs: t0 + 6_100)), [])
    }
}
