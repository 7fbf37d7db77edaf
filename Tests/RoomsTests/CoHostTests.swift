import Rooms
import ShowroomWire
import XCTest

/// Co-hosting, held by the room's owner coordinator: who may apply, invite, answer and stop, seats,
/// and the stage that follows.
final class CoHostTests: XCTestCase {
    var registry = RoomRegistry()
    var generator = SeededGenerator(seed: 9)
    let t0: Int64 = 1_700_000_000_000

    override func setUpWithError() throws {
        var create = Requests.create(id: "show", owner: 1)
        create.seats = 2
        _ = try registry.create(create, nowMs: t0, using: &generator)
        for uid: UInt32 in [10, 11, 12] { _ = try registry.join(Requests.join("show", uid: uid), nowMs: t0) }
    }

    func apply(_ uid: UInt32, cancel: Bool = false) throws -> InteractionOutcome {
        try registry.coHostApply(RoomCoHostApplyRequest.with {
            $0.roomID = "show"
            $0.uid = uid
            $0.userName = "Viewer \(uid)"
            $0.cancel = cancel
        }, nowMs: t0, using: &generator)
    }

    func answer(_ id: String, by uid: UInt32, accept: Bool = true) throws -> InteractionOutcome {
        try registry.coHostAnswer(RoomCoHostAnswerRequest.with {
            $0.roomID = "show"
            $0.uid = uid
            $0.requestID = id
            $0.accept = accept
        }, nowMs: t0, using: &generator)
    }

    func invite(_ uid: UInt32, by owner: UInt32 = 1) throws -> InteractionOutcome {
        try registry.coHostInvite(RoomCoHostInviteRequest.with {
            $0.roomID = "show"
            $0.uid = owner
            $0.inviteeUid = uid
        }, nowMs: t0, using: &generator)
    }

    func stop(_ seat: String, by uid: UInt32) throws -> InteractionOutcome {
        try registry.coHostStop(RoomCoHostStopRequest.with {
            $0.roomID = "show"
            $0.uid = uid
            $0.seatID = seat
        }, nowMs: t0)
    }

    func code(_ body: () throws -> Void) -> ShowroomError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? ShowroomError)?.code
        }
    }

    func testApplyAcceptSeatsTheViewerAndStopEndsIt() throws {
        let application = try XCTUnwrap(try apply(10).request)
        XCTAssertEqual(try apply(10).request?.id, application.id, "applying again is deduplicated")
        XCTAssertEqual(registry.room("show")?.pending.count, 1)
        XCTAssertEqual(code { _ = try self.answer(application.id, by: 10) }, .interactionNotAllowed, "an applicant cannot seat itself")
        XCTAssertEqual(code { _ = try self.answer(application.id, by: 11) }, .interactionNotAllowed)
        let accepted = try answer(application.id, by: 1)
        XCTAssertEqual(accepted.changes.compactMap(\.event?.type), [.cohostAccepted, .cohostStarted])
        let room = try XCTUnwrap(registry.room("show"))
        XCTAssertEqual(room.interaction.kind, .cohost)
        let seat = try XCTUnwrap(room.interaction.seats.first)
        XCTAssertEqual(seat.uid, 10)
        XCTAssertEqual(RoomRegistry.stage(of: room), [1, 10])
        XCTAssertTrue(room.pending.isEmpty)

        XCTAssertEqual(code { _ = try self.stop(seat.id, by: 11) }, .interactionNotAllowed, "only the co-host or the owner stops it")
        XCTAssertEqual(code { _ = try self.stop("co-stale", by: 1) }, .interactionNotFound)
        let stopped = try stop(seat.id, by: 10)
        XCTAssertEqual(stopped.changes.last?.event?.type, .cohostStopped)
        XCTAssertEqual(stopped.changes.last?.event?.uid, 10)
        XCTAssertEqual(registry.room("show")?.interaction.kind, .idle)
        XCTAssertEqual(registry.room("show").map(RoomRegistry.stage(of:)), [1])
        XCTAssertEqual(code { _ = try self.stop(seat.id, by: 1) }, .interactionNotFound, "a late stop ends nothing")
    }

    func testALateStopNeverEndsALaterCoHost() throws {
        let first = try XCTUnwrap(try apply(10).request)
        _ = try answer(first.id, by: 1)
        let oldSeat = try XCTUnwrap(registry.room("show")?.interaction.seats.first?.id)
        _ = try stop(oldSeat, by: 1)
        let second = try XCTUnwrap(try apply(10).request)
        _ = try answer(second.id, by: 1)
        XCTAssertEqual(code { _ = try self.stop(oldSeat, by: 10) }, .interactionNotFound)
        XCTAssertEqual(registry.room("show")?.interaction.seats.map(\.uid), [10])
    }

    func testInviteAcceptRejectAndSeatsRunOut() throws {
        let toEleven = try XCTUnwrap(try invite(11).request)
        XCTAssertEqual(try invite(11).request?.id, toEleven.id, "one open invitation per invitee")
        XCTAssertEqual(code { _ = try self.invite(12, by: 10) }, .notRoomOwner, "only the owner invites")
        XCTAssertEqual(code { _ = try self.answer(toEleven.id, by: 1) }, .interactionNotAllowed, "the invited user answers")
        _ = try answer(toEleven.id, by: 11)
        let toTwelve = try XCTUnwrap(try invite(12).request)
        let rejected = try answer(toTwelve.id, by: 12, accept: false)
        XCTAssertEqual(rejected.changes.last?.event?.type, .cohostRejected)
        let application = try XCTUnwrap(try apply(10).request)
        _ = try answer(application.id, by: 1)
        XCTAssertEqual(registry.room("show")?.interaction.seats.map(\.uid), [11, 10])
        let third = try XCTUnwrap(try apply(12).request)
        XCTAssertEqual(code { _ = try self.answer(third.id, by: 1) }, .noSeatFree, "two seats, both taken")
        XCTAssertEqual(code { _ = try self.invite(10) }, .interactionNotAllowed, "a seated co-host is not invited again")
    }

    func testOnlyTheAudienceComesUpAndLeavingEndsTheSeat() throws {
        XCTAssertEqual(code { _ = try self.apply(99) }, .interactionNotAllowed, "uid 99 never joined the room")
        XCTAssertEqual(code { _ = try self.apply(1) }, .interactionNotAllowed, "the owner is on stage already")
        XCTAssertEqual(code { _ = try self.invite(99) }, .interactionNotAllowed)
        XCTAssertEqual(code { _ = try self.apply(10, cancel: true) }, .interactionNotFound)
        let application = try XCTUnwrap(try apply(10).request)
        _ = try answer(application.id, by: 1)
        let pending = try XCTUnwrap(try apply(11).request)
        _ = try registry.leave(Requests.leave("show", uid: 11), nowMs: t0)
        let applicantLeft = registry.coHostLeft(roomID: "show", uid: 11, nowMs: t0)
        XCTAssertEqual(applicantLeft.changes.map(\.event?.type), [.cohostApplyCancelled])
        XCTAssertFalse(registry.room("show")?.pending.contains { $0.id == pending.id } ?? true)

        let quit = RoomChannelActivity.with {
            $0.type = .broadcasterLeft
            $0.channel = "show"
            $0.uid = 10
            $0.reason = .quit
        }
        var dropped = quit
        dropped.reason = .dropped
        XCTAssertTrue(registry.coHostsLeft(after: [dropped], nowMs: t0).changes.isEmpty, "a dropped link may come back")
        let left = registry.coHostsLeft(after: [quit], nowMs: t0)
        XCTAssertEqual(left.changes.last?.event?.type, .cohostStopped)
        XCTAssertEqual(left.changes.last?.event?.reason, .leftRoom)
        XCTAssertEqual(registry.room("show")?.interaction.kind, .idle)
    }

    func testCoHostingAndPKExcludeEachOtherAndApplicationsExpire() throws {
        let application = try XCTUnwrap(try apply(10).request)
        _ = try answer(application.id, by: 1)
        var other = Requests.create(id: "other", owner: 2)
        other.seats = 1
        _ = try registry.create(other, nowMs: t0, using: &generator)
        XCTAssertThrowsError(try registry.pkInvite(RoomPkInviteRequest.with {
            $0.roomID = "show"
            $0.uid = 1
            $0.peerRoomID = "other"
        }, nowMs: t0, using: &generator)) { XCTAssertEqual(($0 as? ShowroomError)?.code, .roomBusy) }

        _ = try apply(11)
        XCTAssertEqual(registry.tickInteractions(nowMs: t0 + 59_999).changes, [])
        let expired = registry.tickInteractions(nowMs: t0 + 60_000)
        XCTAssertEqual(expired.changes.map(\.event?.type), [.cohostExpired])
        XCTAssertThrowsError(try registry.create({
            var request = Requests.create(id: "big", owner: 5)
            request.seats = 9
            return request
        }(), nowMs: t0, using: &generator)) { XCTAssertEqual(($0 as? ShowroomError)?.code, .invalidArgument) }
    }
}
