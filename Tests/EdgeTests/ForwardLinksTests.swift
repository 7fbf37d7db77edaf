import Edge
import ShowroomWire
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

    // MARK: - What a link's answers and events mean for the forwards

    /// A forward of `key` into `names`, placed on `edge` and joining there over a link.
    private func joining(_ names: [String], on edge: ForwardEdge, _ book: inout ForwardBook, _ links: inout ForwardLinks<String>) throws
        -> (link: ForwardLinks<String>.Link, attempts: [String: UInt64]) {
        var out: [ForwardDirective] = []
        _ = try book.apply(.start(names.map { ForwardDestination(channel: $0, token: "t") }), to: key, from: SessionID(1), now: .zero, &out)
        let link = links.opened("conn", for: key, to: edge.endpoint)
        var attempts: [String: UInt64] = [:]
        for case .place(_, let name, _, let attempt, _) in out {
            _ = book.placed(key, destination: name, attempt: attempt, .success(edge), now: .zero)
            _ = links.join(name, of: key, to: edge.endpoint)
            attempts[name] = attempt
        }
        return (link, attempts)
    }

    func testARefusedJoinLeavesTheLinkAndFailsInTheBook() throws {
        var book = ForwardBook()
        var links = ForwardLinks<String>()
        let (link, attempts) = try joining(["one", "two"], on: edgeA, &book, &links)
        let joined = links.joinAnswered("one", over: link, attempt: attempts["one"]!, .success(()), book: &book, now: .zero)
        XCTAssertTrue(joined.contains { if case .notify(_, let change) = $0 { change.destination.state == .running } else { false } })
        let refused = links.joinAnswered("two", over: link, attempt: attempts["two"]!, .failure(ShowroomError(.tokenExpired, "old")),
                                         book: &book, now: .zero)
        XCTAssertTrue(refused.contains { if case .notify(_, let change) = $0 { change.destination.state == .failure } else { false } })
        XCTAssertEqual(book.statuses(key).map(\.state), [.running, .failure])
        XCTAssertNil(links.remove("two", of: key, to: edgeA.endpoint), "off the link already")
        XCTAssertNil(links.closeIfUnused(link), "one still uses it")
    }

    func testAClosedConnectionLeavesTheLinkWhichClosesOnceItCarriesNothing() throws {
        var book = ForwardBook()
        var links = ForwardLinks<String>()
        let (link, attempts) = try joining(["one"], on: edgeA, &book, &links)
        _ = links.joinAnswered("one", over: link, attempt: attempts["one"]!, .success(()), book: &book, now: .zero)
        let closed = links.connectionClosed("one", over: link, edge: edgeA, ShowroomError(.uidReplaced, "same uid"), book: &book, now: .zero)
        XCTAssertEqual(closed.count, 1)
        XCTAssertEqual(book.statuses(key).map(\.reason), [.sameUIDInDestination])
        XCTAssertEqual(links.closeIfUnused(link), "conn")
    }

    /// What a destination edge says of channels it never had, and a late answer of a connection
    /// replaced since, change neither the links nor the forward.
    func testAnswersAndEventsTheLinkNeverAskedForChangeNothing() throws {
        var book = ForwardBook()
        var links = ForwardLinks<String>()
        let (old, attempts) = try joining(["one"], on: edgeA, &book, &links)
        XCTAssertEqual(links.connectionClosed(String(repeating: "x", count: 100_000), over: old, edge: edgeA, .unavailable("x"),
                                              book: &book, now: .zero), [])
        XCTAssertNil(links.closeIfUnused(old), "one still joined")
        XCTAssertTrue(links.broke(old))
        let new = links.opened("new", for: key, to: edgeA.endpoint)
        _ = links.join("one", of: key, to: edgeA.endpoint)
        XCTAssertEqual(links.joinAnswered("one", over: old, attempt: attempts["one"]! &+ 99, .failure(.unavailable("x")), book: &book,
                                          now: .zero), [], "another attempt's answer")
        XCTAssertEqual(book.statuses(key).map(\.state), [.connecting])
        XCTAssertNil(links.closeIfUnused(new), "the old connection's refusal leaves the new one alone")
        XCTAssertEqual(links.handle(of: key, to: edgeA.endpoint), "new")
    }
}
