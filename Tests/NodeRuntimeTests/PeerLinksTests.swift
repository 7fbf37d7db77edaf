import Logging
@testable import NodeRuntime
import ShowroomWire
import XCTest
import ZeroMQ

/// Links to endpoints no live member has are reclaimed once idle: a cluster whose members come and
/// go does not grow a socket per member ever seen.
final class PeerLinksTests: XCTestCase {
    func testIdleLinksToEndpointsOfNoLiveMemberAreClosedAndTheOthersKept() throws {
        let loop = try EventLoop.start(name: "links-test", context: Context())
        defer { loop.shutdown() }
        let (member, gone, waited) = ("tcp://127.0.0.1:1", "tcp://127.0.0.1:2", "tcp://127.0.0.1:3")
        let closed = try loop.submitAndWait { () -> [[String]] in
            let links = PeerLinks(loop: loop, nodeID: "node-a", highWaterMark: 10, logger: Logger(label: "test"))
            var ping = WireEnvelope()
            ping.kind = .gossip
            links.sendOneWay(ping, to: member)
            links.sendOneWay(ping, to: gone)
            links.request(.nodeInfo, body: WireNodeInfoRequest(), to: waited, timeout: .seconds(30)) { _ in }
            let start = ContinuousClock.now
            var rounds: [[String]] = []
            // Not idle long enough yet: nothing closes.
            rounds.append(links.closeIdleLinks(keeping: [member], idle: .seconds(30), now: start + .seconds(10)))
            // Idle long enough: the link to the endpoint of no member closes; the member's stays, and
            // so does the one a request still waits on.
            rounds.append(links.closeIdleLinks(keeping: [member], idle: .seconds(30), now: start + .seconds(31)))
            rounds.append(links.linkedEndpoints.sorted())
            // A message to the gone endpoint makes its link anew, and a later sweep takes it again.
            links.sendOneWay(ping, to: gone)
            rounds.append(links.closeIdleLinks(keeping: [member], idle: .zero))
            links.close(waited)
            return rounds
        }
        XCTAssertEqual(closed[0], [])
        XCTAssertEqual(closed[1], [gone])
        XCTAssertEqual(closed[2], [member, waited])
        XCTAssertEqual(closed[3], [gone])
    }
}
