import Edge
import XCTest

/// ``ForwardLinks``: which link a forward's destinations go over, when it closes, and which
/// destinations a frame reaches, with plain values (a link's connection is a name here).
final class ForwardLinksTests: XCTestCase {
    private let key = ForwardKey(channel: "src", uid: 7)
    private let edgeA = ForwardEdge(id: "edge-a", endpoint: "tcp://a")
    private let edgeB = ForwardEdge(id: "edge-b", endpoint: "tcp://b")

    /// The destinations a frame reaches on `edge`'s link, nil if none is routed there.
    private func route(
        _ links: inout ForwardLinks<String>, _ targets: [ForwardTarget], on edge: ForwardEdge, video: Bool = true,
        keyframe: Bool = false, ready: Bool = true
    ) -> [String]? {
        var channels = ["left over"]
        guard let index = targets.firstIndex(where: { $0.edge == edge }),
            links.route(key, targets: targets, from: index, video: video, keyframe: keyframe, into: &channels, ready: { _ in ready }) != nil
        else { return nil }
        return channels
    }

    func testOneLinkPerForwardAndEdgeClosedOnceItsLastDestinationLeft() throws {
        var links = ForwardLinks<String>()
        XCTAssertNil(links.join("one", of: key, to: edgeA.endpoint), "no link yet: the shell opens one first")
        let link = links.opened("conn-a", for: key, to: edgeA.endpoint)
        XCTAssertEqual(links.join("one", of: key, to: edgeA.endpoint)?.handle, "conn-a")
        XCTAssertEqual(links.join("two", of: key, to: edgeA.endpoint)?.link, link, "the same link")
        XCTAssertNil(links.handle(of: key, to: edgeB.endpoint), "another edge's link is another link")
        XCTAssertNil(links.handle(of: ForwardKey(channel: "src", uid: 8), to: edgeA.endpoint), "so is another forward's")

        XCTAssertEqual(links.remove("one", of: key, to: edgeA.endpoint)?.link, link)
        XCTAssertNil(links.remove("one", of: key, to: edgeA.endpoint), "left once")
        XCTAssertNil(links.closeIfUnused(link), "two still uses it")
        XCTAssertNotNil(links.remove("two", of: key, to: edgeA.endpoint))
        XCTAssertEqual(links.closeIfUnused(link), "conn-a")
        XCTAssertNil(links.handle(of: key, to: edgeA.endpoint))
        XCTAssertNil(links.closeIfUnused(link), "closed once")
    }

    func testAnswersOnABrokenConnectionChangeNothingOnItsSuccessor() throws {
        var links = ForwardLinks<String>()
        let old = links.opened("old", for: key, to: edgeA.endpoint)
        _ = links.join("one", of: key, to: edgeA.endpoint)
        XCTAssertTrue(links.broke(old))
        XCTAssertFalse(links.broke(old), "broken once")
        XCTAssertFalse(links.isCurrent(old))
        let new = links.opened("new", for: key, to: edgeA.endpoint)
        XCTAssertNotEqual(new, old)
        _ = links.join("one", of: key, to: edgeA.endpoint)
        XCTAssertNil(links.remove("one", of: key, to: edgeA.endpoint, on: old), "a refusal the old connection got")
        XCTAssertNil(links.closeIfUnused(old))
        XCTAssertEqual(links.handle(of: key, to: edgeA.endpoint), "new")
        XCTAssertNotNil(links.remove("one", of: key, to: edgeA.endpoint, on: new))
        XCTAssertEqual(links.closeIfUnused(new), "new")
    }

    func testAJoinedDestinationsVideoStartsAtAKeyframeAndADroppedFrameWaitsForTheNext() {
        var links = ForwardLinks<String>()
        let targets = [ForwardTarget(channel: "one", edge: edgeA), ForwardTarget(channel: "far", edge: edgeB),
                       ForwardTarget(channel: "two", edge: edgeA)]
        _ = links.opened("conn-a", for: key, to: edgeA.endpoint)
        _ = links.join("one", of: key, to: edgeA.endpoint)
        _ = links.join("two", of: key, to: edgeA.endpoint)
        XCTAssertEqual(route(&links, targets, on: edgeA), [], "video waits for a keyframe")
        XCTAssertEqual(route(&links, targets, on: edgeA, video: false), ["one", "two"], "audio does not; two rides along")
        XCTAssertNil(route(&links, targets, on: edgeB), "no link to edge b")
        XCTAssertEqual(route(&links, targets, on: edgeA, keyframe: true, ready: false), nil, "not open yet")
        XCTAssertEqual(route(&links, targets, on: edgeA), [], "still waiting: nothing changed while it was not open")
        XCTAssertEqual(route(&links, targets, on: edgeA, keyframe: true), ["one", "two"])
        XCTAssertEqual(route(&links, targets, on: edgeA), ["one", "two"], "then every frame")
        links.dropped(["one"], of: key, to: edgeA.endpoint)
        XCTAssertEqual(route(&links, targets, on: edgeA), ["two"], "one lost a frame: waits for the next keyframe")
        XCTAssertEqual(route(&links, targets, on: edgeA, keyframe: true), ["one", "two"])
    }

    /// A destination edge's events name what it likes: channels and links never joined change
    /// nothing, whatever their size.
    func testADestinationEdgeNamingChannelsItNeverHadChangesNothing() {
        var links = ForwardLinks<String>()
        let link = links.opened("conn-a", for: key, to: edgeA.endpoint)
        _ = links.join("one", of: key, to: edgeA.endpoint)
        XCTAssertNil(links.remove("never", of: key, to: edgeA.endpoint, on: link))
        XCTAssertNil(links.remove(String(repeating: "x", count: 100_000), of: key, to: edgeA.endpoint, on: link))
        XCTAssertNil(links.remove("one", of: key, to: "tcp://elsewhere", on: link))
        links.dropped(["never"], of: key, to: "tcp://elsewhere")
        XCTAssertNil(links.closeIfUnused(link), "one still joined")
        let targets = [ForwardTarget(channel: "one", edge: edgeA)]
        XCTAssertEqual(route(&links, targets, on: edgeA, keyframe: true), ["one"])
    }
}
