import Edge
import ShowroomWire
import XCTest

/// Data-stream messages: ordered, numbered, size- and rate-limited, publish-data required.
final class StreamMessageTests: XCTestCase {
    private func room(hostGrant: ChannelGrant = .publisher(), hostOptions: MediaOptions? = nil) -> TestEdge {
        var edge = TestEdge()
        for session in [host, viewer1, guest] { edge.open(session) }
        edge.join(host, "room", uid: 100, as: .broadcaster, options: hostOptions, grant: hostGrant)
        edge.join(viewer1, "room", uid: 1, as: .audience)
        edge.join(guest, "room", uid: 2, as: .broadcaster)
        return edge
    }

    private func send(_ edge: inout TestEdge, stream: UInt32, _ data: [UInt8], id: UInt64 = 1) -> [EdgeDirective] {
        edge.run(edge.plane.sendStreamMessage(host, requestID: id, channel: "room", streamID: stream, data: data, now: edge.now))
    }

    func testMessagesArriveInOrderNumberedPerStreamAtEveryOtherUser() {
        var edge = room()
        var all: [EdgeDirective] = []
        for i in 1...5 { all += send(&edge, stream: 1, [UInt8(i)], id: UInt64(i)) }
        for i in 1...2 { all += send(&edge, stream: 2, [UInt8(10 + i)], id: UInt64(10 + i)) }
        for receiver in [viewer1, guest] {
            let messages = all.events(to: receiver).compactMap { event -> (UInt32, UInt32, [UInt8])? in
                if case .streamMessage("room", 100, let stream, let sequence, let data) = event { (stream, sequence, data) } else { nil }
            }
            XCTAssertEqual(messages.map(\.0), [1, 1, 1, 1, 1, 2, 2])
            XCTAssertEqual(messages.map(\.1), [1, 2, 3, 4, 5, 1, 2])
            XCTAssertEqual(messages.map(\.2), [[1], [2], [3], [4], [5], [11], [12]])
        }
        XCTAssertEqual(all.events(to: host), [], "the sender does not get its own messages")
        XCTAssertEqual(all.replies(to: host).map(\.body), [1, 2, 3, 4, 5, 1, 2].map { .streamMessageSent(sequence: $0) })
    }

    func testSizeAndRateLimits() {
        var edge = room()
        XCTAssertNil(send(&edge, stream: 1, [UInt8](repeating: 0, count: 1024)).failure)
        let tooLarge = send(&edge, stream: 1, [UInt8](repeating: 0, count: 1025))
        XCTAssertEqual(tooLarge.failure?.code, .streamMessageTooLarge)
        XCTAssertEqual(tooLarge.events, [], "nothing delivered")

        // 60 messages a second (one is already in this second's window).
        var refused: [ShowroomError.Code?] = []
        for _ in 0..<60 { refused.append(send(&edge, stream: 2, [1]).failure?.code) }
        XCTAssertEqual(refused.compactMap { $0 }, [.streamMessageRateLimited])
        edge.now += .seconds(1)
        edge.heartbeat(host)
        XCTAssertNil(send(&edge, stream: 2, [1]).failure)
        // The refused message did not take a sequence number.
        let sequences = send(&edge, stream: 2, [1]).replies.map(\.body)
        XCTAssertEqual(sequences, [.streamMessageSent(sequence: 61)])

        // 30 KiB a second.
        edge.now += .seconds(1)
        var bytesRefused = 0
        for _ in 0..<31 where send(&edge, stream: 3, [UInt8](repeating: 0, count: 1000)).failure?.code == .streamMessageRateLimited {
            bytesRefused += 1
        }
        XCTAssertEqual(bytesRefused, 1)
    }

    func testPublishDataOptionAndPrivilegeAreRequired() {
        var edge = room(hostOptions: MediaOptions(publishAudio: true, publishVideo: true, publishData: false))
        XCTAssertEqual(send(&edge, stream: 1, [1]).failure?.code, .trackNotPublished)
        var noData = ChannelGrant.publisher()
        noData.privileges[.publishData] = nil
        var other = room(hostGrant: noData)
        XCTAssertEqual(send(&other, stream: 1, [1]).failure?.code, .tokenMissingPrivilege)
        // One-way: the refusal is an error event.
        let oneWay = other.run(other.plane.sendStreamMessage(host, channel: "room", streamID: 1, data: [1], now: other.now))
        XCTAssertEqual(oneWay.events(to: host).errorCodes, [.tokenMissingPrivilege])
    }

    func testAMessageFromTheServerReachesEveryoneOrTheUidsNamedFromUidZero() throws {
        var edge = room()
        let (all, directives) = try edge.plane.sendServerMessage(channel: "room", to: [], data: [7, 7])
        XCTAssertEqual(all, 3, "the host and both users")
        let out = edge.run(directives)
        for receiver in [host, viewer1, guest] {
            XCTAssertEqual(out.events(to: receiver), [.streamMessage(channel: "room", uid: 0, streamID: 0, sequence: 0, data: [7, 7])])
        }
        let (some, named) = try edge.plane.sendServerMessage(channel: "room", to: [1, 999], data: [1])
        XCTAssertEqual(some, 1)
        XCTAssertEqual(edge.run(named).events(to: viewer1).count, 1)
        XCTAssertEqual(try edge.plane.sendServerMessage(channel: "nobody", to: [], data: [1]).delivered, 0)
        XCTAssertThrowsError(try edge.plane.sendServerMessage(channel: "room", to: [], data: Array(repeating: 0, count: 100_000))) {
            XCTAssertEqual(($0 as? ShowroomError)?.code, .streamMessageTooLarge)
        }
    }
}
