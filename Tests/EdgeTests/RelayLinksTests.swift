import Edge
import XCTest

/// ``RelayLinks``: which connection to an origin is current, with plain values; a replaced or
/// closed link's late break and a close for a uid the link no longer has change nothing.
final class RelayLinksTests: XCTestCase {
    private final class Connection {}

    func testOneConnectionPerOriginAndOnlyTheCurrentOneCounts() {
        var links = RelayLinks<Connection>()
        XCTAssertTrue(links.isEmpty)
        let first = Connection()
        links.opened(first, uid: 10, to: "tcp://origin-a")
        XCTAssertTrue(links["tcp://origin-a"] === first)
        XCTAssertNil(links["tcp://origin-b"])
        XCTAssertTrue(links.isCurrent(first, to: "tcp://origin-a"))
        XCTAssertFalse(links.isCurrent(first, to: "tcp://origin-b"), "another origin's endpoint")
        XCTAssertFalse(links.isCurrent(Connection(), to: "tcp://origin-a"), "another connection")
        XCTAssertEqual(links.all.count, 1)
    }

    func testABreakForgetsTheCurrentConnectionOnce() {
        var links = RelayLinks<Connection>()
        let first = Connection()
        links.opened(first, uid: 10, to: "tcp://origin-a")
        XCTAssertTrue(links.broke(first, to: "tcp://origin-a"))
        XCTAssertFalse(links.broke(first, to: "tcp://origin-a"), "reported twice: nothing more to do")
        XCTAssertTrue(links.isEmpty)
        let second = Connection()
        links.opened(second, uid: 11, to: "tcp://origin-a")
        XCTAssertFalse(links.broke(first, to: "tcp://origin-a"), "a replaced connection's late break")
        XCTAssertTrue(links["tcp://origin-a"] === second)
    }

    func testTheBookClosesOnlyTheLinkItOpenedUnderThatUid() {
        var links = RelayLinks<Connection>()
        let link = Connection()
        links.opened(link, uid: 11, to: "tcp://origin-a")
        XCTAssertNil(links.close("tcp://origin-a", uid: 10), "an older link's close")
        XCTAssertNil(links.close("tcp://nowhere", uid: 11))
        XCTAssertTrue(links.close("tcp://origin-a", uid: 11) === link)
        XCTAssertNil(links.close("tcp://origin-a", uid: 11), "closed already")
        XCTAssertEqual(links.all.count, 0)
    }
}
