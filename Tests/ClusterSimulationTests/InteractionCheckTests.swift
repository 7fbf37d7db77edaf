import Calls
@testable import ClusterSimulation
import Routing
import ShowroomWire
import XCTest

/// The call, PK and co-host checks: each catches the wrong state it is about, passes the right
/// one, and a few seeds with every fault run clean with calls and PKs made.
final class InteractionCheckTests: XCTestCase {
    private let nodes = ["signal-1", "signal-2", "signal-3"]

    private func owner(of uid: UInt32) -> String { OwnerRing(.callsignal, memberIDs: nodes).owner(of: UserRecord.key(of: uid))! }
    private func successor(of uid: UInt32) -> String { OwnerRing(.callsignal, memberIDs: nodes).holders(of: UserRecord.key(of: uid), count: 2)[1] }

    private func call(_ id: String, _ caller: UInt32, _ callee: UInt32) -> Call {
        Call(restoring: id, caller: caller, callee: callee, type: .video, channel: "call-\(id)", extensionInfo: [:],
             waitsForFirstFrame: true, startedAtMs: 0, phase: .connected, sequence: 4, deadlineMs: nil, acceptedAtMs: 1,
             connectedAtMs: 2, firstFrames: [caller, callee], absentSince: [:])
    }

    /// A call between `caller` and `callee` as an honest cluster holds it: at the callee's owner,
    /// noted by both parties' owners, replicated to the callee's successor.
    private func hold(_ call: Call, in holdings: inout Invariants.CallHoldings) {
        holdings.calls[owner(of: call.callee), default: [:]][call.id] = call
        for party in [call.caller, call.callee] {
            holdings.callOf[owner(of: party), default: [:]][party] = call.id
            holdings.records[successor(of: party), default: [:]][party] = UserRecord(
                uid: party, inCall: .init(callID: call.id, owner: owner(of: call.callee)),
                ownedCall: party == call.callee ? call : nil)
        }
    }

    func testTheCallChecksPassAHeldCallAndCatchADoubledOneAndAPartyStuckInAnEndedOne() {
        let uids: [UInt32] = [2001, 2002, 2003]
        var holdings = Invariants.CallHoldings()
        let first = call("2002-aa", 2001, 2002)
        hold(first, in: &holdings)
        var clients = Invariants.CallClientViews()
        clients.current = [2001: (first.id, true), 2002: (first.id, true)]
        clients.accepted = [first.id]
        XCTAssertEqual(Invariants.calls(holdings, nodes: nodes, uids: uids, clients: clients), [])

        // uid 2001 rung into a second call at another owner while in the first.
        var doubled = holdings
        let second = call("2003-bb", 2001, 2003)
        doubled.calls[owner(of: 2003), default: [:]][second.id] = second
        let found = Invariants.calls(doubled, nodes: nodes, uids: uids, clients: clients)
        XCTAssertTrue(found.contains { $0.rule == "call doubled" && $0.detail.contains("uid 2001") }, "\(found)")

        // The call ended at its owner, but the end never reached a party.
        var ended = holdings
        ended.calls[owner(of: 2002)] = [:]
        let lost = Invariants.calls(ended, nodes: nodes, uids: uids, clients: clients)
        XCTAssertTrue(lost.contains { $0.rule == "acknowledged call lost" && $0.detail.contains("uid 2001") }, "\(lost)")
        XCTAssertTrue(lost.contains { $0.rule == "party held in a call that is over" }, "\(lost)")
        XCTAssertTrue((found + lost).allSatisfy { Invariants.callRules.contains($0.rule) }, "the call rules are listed")
    }

    private func room(_ id: String, _ kind: RoomRoomInteractionKind, pk: String = "", peer: String = "") -> RoomRoom {
        RoomRoom.with {
            $0.roomID = id
            $0.channel = id
            $0.state = .open
            $0.interaction.kind = kind
            $0.interaction.id = pk
            $0.interaction.peerRoomID = peer
        }
    }

    func testTheInteractionChecksCatchAOneSidedPK() {
        let a = room("pk-room-1", .pk, pk: "pk-1", peer: "pk-room-2")
        let b = room("pk-room-2", .pk, pk: "pk-1", peer: "pk-room-1")
        let mutual: [String: RoomRoom?] = ["pk-room-1": a, "pk-room-2": b]
        XCTAssertEqual(Invariants.interactions(rooms: mutual, successors: mutual, nowMs: 0, skewMs: 0), [])

        let oneSided: [String: RoomRoom?] = ["pk-room-1": a, "pk-room-2": room("pk-room-2", .idle)]
        let found = Invariants.interactions(rooms: oneSided, successors: oneSided, nowMs: 0, skewMs: 0)
        XCTAssertEqual(found.map(\.rule), ["PK one-sided"], "\(found)")

        // Successor behind its owner, and a PK room with a co-host seated.
        var seated = a
        seated.interaction.seats = [RoomCoHostSeat.with { $0.uid = 7; $0.id = "co-1" }]
        let rooms: [String: RoomRoom?] = ["pk-room-1": seated, "pk-room-2": b]
        let both = Invariants.interactions(rooms: rooms, successors: mutual, nowMs: 0, skewMs: 0)
        XCTAssertEqual(Set(both.map(\.rule)), ["owner and successor differ", "room in two interactions"], "\(both)")
    }

    func testSeedsWithEveryFaultMakeCallsAndPKsWithoutViolations() throws {
        var accepts = 0
        var pks = 0
        for seed in UInt64(1)...4 {
            var simulation = Simulation(seed: seed)
            simulation.overrides.steps = 120
            simulation.keepLines = true
            let outcome = try simulation.run()
            XCTAssertEqual(outcome.violations, [], "\(outcome.summary)\n\(outcome.knobs)\n\(outcome.tail.joined())")
            let lines = outcome.lines ?? []
            accepts += lines.filter { $0.contains(" accept ") && $0.hasSuffix(" ok\n") }.count
            pks += lines.filter { $0.contains("pk accept") && $0.hasSuffix(" ok\n") }.count
        }
        XCTAssertGreaterThan(accepts, 0, "no call was accepted")
        XCTAssertGreaterThan(pks, 0, "no PK was started")
    }
}
