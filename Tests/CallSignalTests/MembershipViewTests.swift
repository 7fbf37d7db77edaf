import NodeRuntime
import Routing
import ShowroomTesting
import XCTest

/// The cached ring of a role follows the membership: kept while nothing changes, made again when
/// a member appears or dies.
final class MembershipViewTests: XCTestCase {
    func testTheRingIsKeptUntilTheMembershipChanges() {
        let network = InProcessNetwork()
        let a = network.add("signal-a", role: .callsignal)
        _ = network.add("signal-b", role: .callsignal)
        _ = network.add("coordinator", role: .coordinator)
        var cache = MembershipView.ring(.callsignal)
        XCTAssertEqual(cache.value(of: a).members, ["signal-a", "signal-b"])
        XCTAssertEqual(cache.value(of: a), a.ring(.callsignal))

        _ = network.add("signal-c", role: .callsignal)
        XCTAssertEqual(cache.value(of: a).members, ["signal-a", "signal-b", "signal-c"], "a new member is in the next ring")

        network.kill("signal-b")
        XCTAssertEqual(cache.value(of: a).members, ["signal-a", "signal-c"], "a dead member is out of the next ring")
        XCTAssertEqual(cache.value(of: a), a.ring(.callsignal))
    }
}
