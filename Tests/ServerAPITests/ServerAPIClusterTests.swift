import Foundation
import ServerAPI
import ShowroomAuth
import ShowroomKit
import ShowroomTesting
import ShowroomWire
import Synchronization
import XCTest

/// The server API over real HTTP against a real cluster (two coordinators, an edge): each
/// operation's answer and its refusals, answered by either coordinator.
final class ServerAPIClusterTests: XCTestCase {
    nonisolated(unsafe) static var cluster: TestCluster?
    static let business = (id: "business", secret: "business-secret-0123456789")
    static let reader = (id: "reader", secret: "reader-secret-0123456789")
    static let limited = (id: "limited", secret: "limited-secret-0123456789")

    static func entry(_ key: (id: String, secret: String), scopes: [String], rate: (Double, Int)? = nil) -> [String: Any] {
        var entry: [String: Any] = [
            "id": key.id, "secretSHA256": Hex.encode(CustomerKey.hash(secret: key.secret)), "scopes": scopes,
        ]
        if let rate { entry["requestsPerSecond"] = rate.0; entry["burst"] = rate.1 }
        return entry
    }

    override class func setUp() {
        super.setUp()
        cluster = try? TestCluster(coordinators: 2, edges: 1, coordinatorSettings: [
            "apiKeys": [
                entry(business, scopes: ["read", "rooms", "moderation", "calls", "recording"], rate: (1000, 1000)),
                entry(reader, scopes: ["read"], rate: (1000, 1000)),
                entry(limited, scopes: ["read"], rate: (1, 3)),
            ],
        ])
    }

    override class func tearDown() {
        cluster?.down()
        cluster = nil
        super.tearDown()
    }

    private var clients: [ServerAPIClient] = []

    override func tearDown() async throws {
        for client in clients { await client.shutdown() }
        clients = []
    }

    /// A client of coordinator `n`'s API with `key`.
    private func client(_ n: Int = 1, _ key: (id: String, secret: String)? = business) throws -> ServerAPIClient {
        let cluster = try XCTUnwrap(Self.cluster, "the cluster did not start")
        let client = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-\(n)"), key: key)
        clients.append(client)
        return client
    }

    private func assertError(_ response: APIResponse, _ status: Int, _ code: String, _ what: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, "\(what): \(response.text)", file: file, line: line)
        let body = try? response.object()
        XCTAssertEqual(body?["code"] as? String, code, "\(what): \(response.text)", file: file, line: line)
        XCTAssertFalse((body?["message"] as? String ?? "").isEmpty, "\(what): no message", file: file, line: line)
        XCTAssertNotNil(body?["number"] as? Int, "\(what): no number", file: file, line: line)
    }

    func testHealthAndTheDocumentNeedNoKey() async throws {
        let open = try client(1, nil)
        let health = try await open.send("GET", "/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(try health.object()["node"] as? String, "coordinator-1")
        let document = try await open.send("GET", "/v1/openapi.json")
        XCTAssertEqual(document.status, 200)
        let object = try document.object()
        XCTAssertEqual(object["openapi"] as? String, "3.1.0")
        let paths = try XCTUnwrap(object["paths"] as? [String: Any])
        XCTAssertNotNil(paths["/v1/rooms"])
    }

    func testCredentialsAndScopesAreChecked() async throws {
        let none = try await client(1, nil).send("GET", "/v1/rooms")
        assertError(none, 401, "permissionDenied", "no credentials")
        XCTAssertEqual(none.headers["www-authenticate"], "Basic realm=\"showroom\"")
        assertError(try await client(1, (id: "business", secret: "wrong")).send("GET", "/v1/rooms"), 401, "permissionDenied", "a wrong secret")
        assertError(try await client(1, (id: "nobody", secret: Self.business.secret)).send("GET", "/v1/rooms"), 401, "permissionDenied", "an unknown key")
        let reader = try client(2, Self.reader)
        let read = try await reader.send("GET", "/v1/rooms")
        XCTAssertEqual(read.status, 200, "a reader reads")
        assertError(try await reader.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 5]), 403, "permissionDenied", "a reader creates")
        assertError(try await reader.send("POST", "/v1/channels/c/kick", json: ["uid": 5]), 403, "permissionDenied", "a reader kicks")
        assertError(try await reader.send("GET", "/v1/no-such-thing"), 404, "unknownKind", "an unknown path")
        let wrongMethod = try await reader.send("PUT", "/v1/rooms")
        assertError(wrongMethod, 405, "unknownKind", "a method the path does not take")
        XCTAssertEqual(wrongMethod.headers["allow"], "GET, POST")
        assertError(try await reader.send("GET", "/v1/rooms?page_sise=5"), 400, "invalidArgument", "a misspelt query parameter")
    }

    func testARoomCreatedOnOneCoordinatorIsReadAndClosedOnTheOther() async throws {
        let one = try client(1)
        let two = try client(2)
        let created = try await one.send("POST", "/v1/rooms", json: ["name": "Evening show", "owner_uid": 7001, "owner_name": "Ann", "seats": 2])
        XCTAssertEqual(created.status, 201, created.text)
        let room = try created.object()
        let id = try XCTUnwrap(room["room_id"] as? String)
        XCTAssertEqual(room["name"] as? String, "Evening show")
        XCTAssertEqual(room["owner_uid"] as? Int, 7001)
        XCTAssertEqual(room["closed"] as? Bool, false)
        XCTAssertEqual(room["seats"] as? Int, 2)
        // Either coordinator answers, whichever owns the room.
        let got = try await two.send("GET", "/v1/rooms/\(id)")
        XCTAssertEqual(got.status, 200, got.text)
        XCTAssertEqual(try got.object()["owner_name"] as? String, "Ann")
        // The hot read and the generated code (which takes an Accept listing more than JSON) answer alike.
        let generated = try await two.send("GET", "/v1/rooms/\(id)", headers: ["Accept": "application/json, text/plain"])
        XCTAssertEqual(generated.status, 200, generated.text)
        XCTAssertEqual(got.text, generated.text)
        XCTAssertEqual(got.headers["content-type"], generated.headers["content-type"])
        let page = try await two.send("GET", "/v1/rooms?page_size=100")
        XCTAssertEqual(page.status, 200, page.text)
        let rooms = try XCTUnwrap(try page.object()["rooms"] as? [[String: Any]])
        XCTAssertTrue(rooms.contains { $0["room_id"] as? String == id }, page.text)
        // Renamed and tagged through one coordinator, seen through the other; its audience is told.
        let cluster = try XCTUnwrap(Self.cluster)
        let loop = try EngineLoop(name: "api-room-events")
        let service = RoomService(seeds: [try cluster.clientEndpoint(of: "coordinator-1")], loop: loop)
        let seen = Mutex<[RoomEvent]>([])
        let watcher = Task {
            for await event in service.events(for: id) { seen.withLock { $0.append(event) } }
        }
        try await eventually("the room's events are followed") {
            seen.withLock { $0.contains { if case .snapshot = $0 { true } else { false } } }
        }
        let patched = try await one.send("PATCH", "/v1/rooms/\(id)", json: ["name": "Late show", "metadata": #"{"cover":"c.png"}"#])
        XCTAssertEqual(patched.status, 200, patched.text)
        XCTAssertEqual(try patched.object()["name"] as? String, "Late show")
        try await eventually("its audience is told") {
            seen.withLock { $0.contains { if case .roomUpdated(let room) = $0 { room.name == "Late show" && room.metadata == #"{"cover":"c.png"}"# } else { false } } }
        }
        watcher.cancel()
        let read = try await two.send("GET", "/v1/rooms/\(id)")
        XCTAssertEqual(try read.object()["metadata"] as? String, #"{"cover":"c.png"}"#)
        let unchanged = try await two.send("PATCH", "/v1/rooms/\(id)", json: ["name": NSNull()])
        XCTAssertEqual(unchanged.status, 200, "nothing to change: the room as it is")
        XCTAssertEqual(try unchanged.object()["name"] as? String, "Late show")
        assertError(try await two.send("PATCH", "/v1/rooms/\(id)", json: ["metadata": String(repeating: "m", count: 1025)]), 400, "invalidArgument", "too much metadata")
        await service.shutdown()
        await loop.shutdown()

        // The same id again is a conflict.
        assertError(try await two.send("POST", "/v1/rooms", json: ["room_id": id, "name": "again", "owner_uid": 7002]), 409, "roomExists", "a taken id")
        let closed = try await two.send("DELETE", "/v1/rooms/\(id)")
        XCTAssertEqual(closed.status, 200, closed.text)
        XCTAssertEqual(try closed.object()["closed"] as? Bool, true)
        let after = try await one.send("GET", "/v1/rooms/\(id)")
        XCTAssertEqual(try after.object()["closed"] as? Bool, true, after.text)
    }

    func testAHostileRoomNameReadsBackAsItWasOnTheHotReadAndTheGeneratedOne() async throws {
        let api = try client(1)
        let name = #"</script> "q" back\slash /slash/ é 中文 😀👩‍👩‍👧 \u0041 {"x":1}"#
        let created = try await api.send("POST", "/v1/rooms", json: ["name": name, "owner_uid": 7101, "owner_name": name])
        XCTAssertEqual(created.status, 201, created.text)
        let id = try XCTUnwrap(try created.object()["room_id"] as? String)
        let patched = try await api.send("PATCH", "/v1/rooms/\(id)", json: ["metadata": name])
        XCTAssertEqual(patched.status, 200, patched.text)
        let hot = try await api.send("GET", "/v1/rooms/\(id)")
        XCTAssertEqual(hot.status, 200, hot.text)
        for field in ["name", "owner_name", "metadata"] { XCTAssertEqual(try hot.object()[field] as? String, name, field) }
        let generated = try await api.send("GET", "/v1/rooms/\(id)", headers: ["Accept": "application/json, text/plain"])
        XCTAssertEqual(hot.text, generated.text)
        // Its refusals are the generated path's: no key, an unknown room.
        assertError(try await self.client(1, nil).send("GET", "/v1/rooms/\(id)"), 401, "permissionDenied", "no key")
        assertError(try await api.send("GET", "/v1/rooms/no-such-room-\(UInt32.random(in: 0 ... .max))"), 404, "roomNotFound", "an unknown room")
        _ = try await api.send("DELETE", "/v1/rooms/\(id)")
    }

    func testBadInputGetsAClearErrorAndChangesNothing() async throws {
        let api = try client(1)
        assertError(try await api.send("GET", "/v1/rooms/no-such-room"), 404, "roomNotFound", "an unknown room")
        assertError(try await api.send("DELETE", "/v1/rooms/no-such-room"), 404, "roomNotFound", "closing an unknown room")
        assertError(try await api.send("GET", "/v1/rooms?page_size=0"), 400, "invalidArgument", "page size 0")
        assertError(try await api.send("GET", "/v1/rooms?page_size=abc"), 400, "invalidArgument", "page size not a number")
        assertError(try await api.send("GET", "/v1/rooms?page_token=-1:abc"), 400, "invalidArgument", "a page token never handed out")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 5, "room_id": ""]), 400, "invalidArgument", "an empty room id")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 5, "colour": "red"]), 400, "invalidArgument", "an unknown field")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x\u{7}", "owner_uid": 5]), 400, "invalidArgument", "a control character")
        assertError(try await api.send("POST", "/v1/channels/\(String(repeating: "c", count: 65))/kick", json: ["uid": 5]), 400, "invalidArgument", "a channel name too long")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x"]), 400, "invalidArgument", "no owner")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 0]), 400, "invalidArgument", "uid 0")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 4_294_967_296]), 400, "invalidArgument", "uid past 2^32")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 5, "room_id": "bad id!"]), 400, "invalidArgument", "a bad room id")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": "x", "owner_uid": 5, "seats": 9]), 400, "invalidArgument", "nine seats")
        assertError(try await api.send("POST", "/v1/rooms", json: ["name": String(repeating: "n", count: 1000), "owner_uid": 5]), 400, "invalidArgument", "a long name")
        assertError(try await api.send("POST", "/v1/rooms", body: Array("{not json".utf8)), 400, "invalidArgument", "not JSON")
        let huge = try await api.send("POST", "/v1/rooms", body: Array(repeating: UInt8(ascii: " "), count: 100_000))
        XCTAssertEqual(huge.status, 413, "a body over 64 KiB")
        assertError(try await api.send("POST", "/v1/channels/c/kick", json: ["uid": -1]), 400, "invalidArgument", "a negative uid")
        assertError(try await api.send("POST", "/v1/channels/c/kick", json: ["uid": 5, "ban_seconds": 100_000]), 400, "invalidArgument", "a ban too long")
        // Nothing was created by any of it.
        let page = try await api.send("GET", "/v1/rooms?page_size=100")
        let rooms = try XCTUnwrap(try page.object()["rooms"] as? [[String: Any]])
        XCTAssertFalse(rooms.contains { ($0["name"] as? String) == "x" }, page.text)
    }

    func testAKeyPastItsRateIsToldWhenToRetry() async throws {
        let api = try client(1, Self.limited)
        var statuses: [Int] = []
        var retryAfter: String?
        for _ in 0..<6 {
            let response = try await api.send("GET", "/v1/rooms")
            statuses.append(response.status)
            if response.status == 429 {
                retryAfter = response.headers["retry-after"]
                assertError(response, 429, "rateLimited", "past the rate")
            }
        }
        XCTAssertEqual(statuses.prefix(3), [200, 200, 200], "the burst of 3 goes through: \(statuses)")
        XCTAssertTrue(statuses.dropFirst(3).contains(429), "past the burst at 1 a second: \(statuses)")
        XCTAssertEqual(retryAfter, "1")
        // Another key is not slowed by this one.
        let other = try await client(1, Self.reader).send("GET", "/v1/rooms")
        XCTAssertEqual(other.status, 200)
    }

    func testAKickThroughTheAPIClosesTheViewersConnection() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-kick-\(UInt32.random(in: 0 ... .max))"
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([try cluster.clientEndpoint(of: "coordinator-1")])))
        let log = EventLog(viewer)
        try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 41, role: .subscriber),
                                     channel: channel, uid: 41, options: .audience)
        let kicked = try await client(2).send("POST", "/v1/channels/\(channel)/kick", json: ["uid": 41, "ban_seconds": 30])
        XCTAssertEqual(kicked.status, 200, kicked.text)
        let result = try kicked.object()
        XCTAssertEqual(result["edges"] as? Int, 1, kicked.text)
        XCTAssertEqual(result["privileges"] as? [String], ["join_channel"], kicked.text)
        try await log.wait("the connection closed as banned") { event in
            if case .connectionClosed(_, let error) = event { return error.code == .banned }
            return false
        }
        await assertFails(.banned, "a rejoin during the ban") {
            try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 41, role: .subscriber),
                                         channel: channel, uid: 41, options: .audience)
        }
        await viewer.shutdown()
    }

    func testTheClusterViewListsEveryMember() async throws {
        let response = try await client(2, Self.reader).send("GET", "/v1/cluster")
        XCTAssertEqual(response.status, 200, response.text)
        let members = try XCTUnwrap(try response.object()["members"] as? [[String: Any]])
        XCTAssertEqual(Set(members.compactMap { $0["id"] as? String }), ["coordinator-1", "coordinator-2", "edge-1"])
    }
}

/// Who is in a channel and ban rules, natively and in Agora's shapes, answered by a coordinator
/// from its edges.
final class ServerAPIChannelTests: XCTestCase {
    nonisolated(unsafe) static var cluster: TestCluster?
    static let key = (id: "business", secret: "business-secret-0123456789")

    override class func setUp() {
        super.setUp()
        // A user list is kept for a minute unless an edge reports: every list these tests see
        // change within their deadlines shows that the edges' reports drop the kept ones.
        cluster = try? TestCluster(coordinators: 2, edges: 2, coordinatorSettings: [
            "apiKeys": [ServerAPIClusterTests.entry(key, scopes: ["read", "moderation", "rooms"], rate: (1000, 1000))],
            "userListKeepMs": 60_000,
        ])
    }

    override class func tearDown() {
        cluster?.down()
        cluster = nil
        super.tearDown()
    }

    private func joined(_ channel: String, uid: UInt32, host: Bool, camera: Bool = false) async throws -> ShowroomEngine {
        let cluster = try XCTUnwrap(Self.cluster, "the cluster did not start")
        let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([try cluster.clientEndpoint(of: "coordinator-1")])))
        if camera { await engine.setLocalVideoSource(TestPatternCamera(width: 160, height: 120, framesPerSecond: 15)) }
        try await engine.joinChannel(token: try TestApp.token(channel: channel, uid: uid, role: host ? .publisher : .subscriber),
                                     channel: channel, uid: uid, options: host ? .broadcaster : .audience)
        return engine
    }

    func testTheUsersOfAChannelWithRoleJoinTimeAndEdgeNativelyAndAsAgoraShowsThem() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-users-\(UInt32.random(in: 0 ... .max))"
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let host = try await joined(channel, uid: 501, host: true)
        let viewer = try await joined(channel, uid: 502, host: false)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-2"), key: Self.key)
        // The edges report their channels every second: the coordinator knows the channel soon.
        var users: [[String: Any]] = []
        try await eventually("both users listed") {
            let response = try await api.send("GET", "/v1/channels/\(channel)/users")
            guard response.status == 200, let listed = try response.object()["users"] as? [[String: Any]] else { return false }
            users = listed
            return users.count == 2
        }
        XCTAssertEqual(users.map { $0["uid"] as? Int }, [501, 502], "the host first")
        // The hot read and the generated code (which takes a query) answer alike.
        let hot = try await api.send("GET", "/v1/channels/\(channel)/users")
        let generated = try await api.send("GET", "/v1/channels/\(channel)/users?hosts_only=false")
        XCTAssertEqual(generated.status, 200, generated.text)
        XCTAssertEqual(hot.text, generated.text)
        XCTAssertEqual(hot.headers["content-type"], generated.headers["content-type"])
        XCTAssertEqual(users.map { $0["role"] as? String }, ["host", "audience"])
        for user in users {
            let joined = try XCTUnwrap(user["joined_at_ms"] as? Int64)
            XCTAssertTrue(joined >= before - 1000 && joined <= Int64(Date().timeIntervalSince1970 * 1000) + 1000, "\(user)")
            XCTAssertTrue((user["edge"] as? String)?.hasPrefix("edge-") == true, "\(user)")
        }
        let hosts = try await api.send("GET", "/v1/channels/\(channel)/users?hosts_only=true")
        XCTAssertEqual((try hosts.object()["users"] as? [[String: Any]])?.map { $0["uid"] as? Int }, [501])
        XCTAssertEqual(try hosts.object()["audience_total"] as? Int, 1, "the count goes on without the list")
        let one = try await api.send("GET", "/v1/channels/\(channel)/users/502")
        XCTAssertEqual(try one.object()["in_channel"] as? Bool, true, one.text)
        XCTAssertEqual(try one.object()["role"] as? String, "audience")
        let absent = try await api.send("GET", "/v1/channels/\(channel)/users/999")
        XCTAssertEqual(try absent.object()["in_channel"] as? Bool, false)

        // The cluster view has the channel with its edge, as showroomctl status --json shows it.
        let view = try await api.send("GET", "/v1/cluster")
        XCTAssertEqual(view.status, 200, view.text)
        let channels = try XCTUnwrap(try view.object()["channels"] as? [[String: Any]], view.text)
        XCTAssertTrue(channels.contains { $0["name"] as? String == channel && ($0["edge"] as? String)?.hasPrefix("edge-") == true }, view.text)
        XCTAssertEqual((try view.object()["members"] as? [[String: Any]])?.count, 4)
        XCTAssertNotNil(try view.object()["rooms"] as? [Any])
        XCTAssertNotNil(try view.object()["calls"] as? [Any])

        // Agora's shapes, the same data.
        let app = TestApp.appID
        let agora = try await api.send("GET", "/dev/v1/channel/user/\(app)/\(channel)")
        XCTAssertEqual(agora.status, 200, agora.text)
        let data = try XCTUnwrap(try agora.object()["data"] as? [String: Any])
        XCTAssertEqual(try agora.object()["success"] as? Bool, true)
        XCTAssertEqual(data["channel_exist"] as? Bool, true)
        XCTAssertEqual(data["mode"] as? Int, 2)
        XCTAssertEqual(data["broadcasters"] as? [Int], [501])
        XCTAssertEqual(data["audience"] as? [Int], [502])
        XCTAssertEqual(data["audience_total"] as? Int, 1)
        let hostsAnswer = try await api.send("GET", "/dev/v1/channel/user/\(app)/\(channel)/hosts_only")
        let hostsOnly = try XCTUnwrap(try hostsAnswer.object()["data"] as? [String: Any])
        XCTAssertEqual(hostsOnly["broadcasters"] as? [Int], [501])
        XCTAssertNil(hostsOnly["audience"])
        let propertyAnswer = try await api.send("GET", "/dev/v1/channel/user/property/\(app)/501/\(channel)")
        let property = try XCTUnwrap(try propertyAnswer.object()["data"] as? [String: Any])
        XCTAssertEqual(property["in_channel"] as? Bool, true)
        XCTAssertEqual(property["role"] as? Int, 2)
        XCTAssertEqual(property["uid"] as? Int, 501)
        XCTAssertTrue((property["join"] as? Int64 ?? 0) >= before / 1000 - 1)
        var lastList = ""
        do {
            try await eventually("the channel in Agora's channel list") {
                let list = try await api.send("GET", "/dev/v1/channel/\(app)?page_size=500")
                lastList = list.text
                guard let listed = (try list.object()["data"] as? [String: Any])?["channels"] as? [[String: Any]] else { return false }
                return listed.contains { $0["channel_name"] as? String == channel && $0["user_count"] as? Int == 2 }
            }
        } catch {
            XCTFail("\(error); the last list: \(lastList)")
        }
        // An empty channel, another app, a bad page.
        let emptyAnswer = try await api.send("GET", "/dev/v1/channel/user/\(app)/nobody-here")
        let empty = try XCTUnwrap(try emptyAnswer.object()["data"] as? [String: Any])
        XCTAssertEqual(empty["channel_exist"] as? Bool, false)
        XCTAssertNil(empty["broadcasters"])
        let otherApp = try await api.send("GET", "/dev/v1/channel/user/\(String(repeating: "0", count: 32))/\(channel)")
        XCTAssertEqual(otherApp.status, 401, "Agora's answer to an unknown App ID")
        XCTAssertTrue((try otherApp.object()["message"] as? String)?.hasPrefix("invalid appid") == true, otherApp.text)
        let badPage = try await api.send("GET", "/dev/v1/channel/\(app)?page_size=501")
        XCTAssertEqual(badPage.status, 400)
        let badName = try await api.send("GET", "/v1/channels/\(String(repeating: "x", count: 65))/users")
        XCTAssertEqual(badName.status, 400)
        let pastTheEnd = try await api.send("GET", "/dev/v1/channel/\(app)?page_no=1000&page_size=500")
        XCTAssertEqual(((try pastTheEnd.object()["data"] as? [String: Any])?["channels"] as? [Any])?.count, 0)

        await api.shutdown()
        await viewer.shutdown()
        await host.shutdown()
    }

    private func closedAsBanned(_ log: EventLog) async throws {
        try await log.wait("the connection closed as banned") { event in
            if case .connectionClosed(_, let error) = event { return error.code == .banned }
            return false
        }
    }

    func testAKeptUserListFollowsJoinsLeavesAndBansOnEitherCoordinator() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-kept-\(UInt32.random(in: 0 ... .max))"
        let apis = try ["coordinator-1", "coordinator-2"].map { ServerAPIClient(base: try cluster.apiEndpoint(of: $0), key: Self.key) }
        func listed(_ api: ServerAPIClient) async throws -> [Int] {
            let response = try await api.send("GET", "/v1/channels/\(channel)/users")
            guard response.status == 200 else { throw ShowroomError.internal("user list: \(response.status) \(response.text)") }
            return ((try response.object()["users"] as? [[String: Any]]) ?? []).compactMap { $0["uid"] as? Int }
        }
        func eventuallyListed(_ uids: [Int], _ what: String) async throws {
            for api in apis {
                var last: [Int] = []
                do {
                    try await eventually(what) {
                        last = try await listed(api)
                        return last == uids
                    }
                } catch {
                    XCTFail("\(error); \(api.base) lists \(last)")
                }
            }
        }
        do {
            try await followJoinsLeavesAndBans(in: channel, apis: apis, listed: listed, eventuallyListed: eventuallyListed)
        } catch {
            XCTFail("\(error)")
        }
        for api in apis { await api.shutdown() }
    }

    private func followJoinsLeavesAndBans(
        in channel: String, apis: [ServerAPIClient], listed: (ServerAPIClient) async throws -> [Int],
        eventuallyListed: ([Int], String) async throws -> Void
    ) async throws {
        let host = try await joined(channel, uid: 701, host: true)
        try await eventuallyListed([701], "the host listed")
        // Served again from what is kept (the edges are not asked for these), and still right.
        for api in apis {
            for _ in 0..<20 {
                let again = try await listed(api)
                XCTAssertEqual(again, [701], "\(api.base) lists the host alone while nothing changes")
            }
        }

        let viewer = try await joined(channel, uid: 702, host: false)
        try await eventuallyListed([701, 702], "a viewer's join drops the kept list on both coordinators")
        try await viewer.leaveChannel()
        try await eventuallyListed([701], "its leave too")
        let kicked = try await joined(channel, uid: 703, host: false)
        try await eventuallyListed([701, 703], "a third user listed")
        // A ban rule answered means its edges kicked: the next list on that coordinator has the
        // user no more, with no waiting for a report.
        let rule = try await apis[1].send("POST", "/v1/bans", json: ["channel": channel, "uid": 703, "privileges": ["join_channel"], "seconds": 60])
        XCTAssertEqual(rule.status, 201, rule.text)
        let afterBan = try await listed(apis[1])
        XCTAssertEqual(afterBan, [701], "the banned user is not listed right after the rule's answer")
        if let id = try rule.object()["id"] as? Int { _ = try await apis[1].send("DELETE", "/v1/bans/\(id)") }
        await kicked.shutdown()
        await viewer.shutdown()
        try await host.leaveChannel()
        await host.shutdown()
    }

    func testABanRuleKicksAtOnceKeepsTheUserOutUntilItEndsAndIsListedChangedAndLifted() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-ban-\(UInt32.random(in: 0 ... .max))"
        let viewer = try await joined(channel, uid: 601, host: false)
        let other = try await joined(channel, uid: 602, host: false)
        let log = EventLog(viewer)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let asked = ContinuousClock.now
        let created = try await api.send("POST", "/v1/bans", json: ["channel": channel, "uid": 601, "privileges": ["join_channel"], "seconds": 3])
        XCTAssertEqual(created.status, 201, created.text)
        let rule = try created.object()
        XCTAssertEqual(rule["edges"] as? Int, 2, "both edges enforce it")
        let id = try XCTUnwrap(rule["id"] as? Int)
        try await closedAsBanned(log)
        let kickedAfter = asked.duration(to: .now)
        XCTAssertLessThan(kickedAfter, .seconds(1), "kicked within a second of the request")
        // The other viewer was not touched: it is still in the channel to leave it.
        try await other.leaveChannel()
        await assertFails(.banned, "a rejoin while the rule holds") {
            try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 601, role: .subscriber), channel: channel, uid: 601, options: .audience)
        }
        // Listed on the other coordinator too (replicated), and in Agora's shape.
        let other2 = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-2"), key: Self.key)
        try await eventually("the rule listed by the other coordinator") {
            let list = try await other2.send("GET", "/v1/bans")
            return (try list.object()["rules"] as? [[String: Any]])?.contains { $0["id"] as? Int == id } == true
        }
        let agora = try await other2.send("GET", "/dev/v1/kicking-rule?appid=\(TestApp.appID)")
        let agoraRule = try XCTUnwrap((try agora.object()["rules"] as? [[String: Any]])?.first { $0["id"] as? Int == id }, agora.text)
        XCTAssertEqual(agoraRule["cname"] as? String, channel)
        XCTAssertEqual(agoraRule["uid"] as? Int, 601)
        XCTAssertTrue((agoraRule["ts"] as? String)?.hasSuffix("Z") == true, "\(agoraRule)")
        // The rule ends: the user is let back in, with no further request.
        try await eventually("a rejoin once the rule ended", timeout: .seconds(10)) {
            do {
                try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 601, role: .subscriber), channel: channel, uid: 601, options: .audience)
                return true
            } catch let error as ShowroomError where error.code == .banned {
                return false
            }
        }
        XCTAssertGreaterThan(asked.duration(to: .now), .seconds(2), "not before the rule ended")
        // Made again, lengthened, then lifted: back in at once.
        do {
            let answer = try await api.send("POST", "/v1/bans", json: ["channel": channel, "uid": 601, "privileges": ["join_channel"], "seconds": 60])
            XCTAssertEqual(answer.status, 201, answer.text)
        }
        try await closedAsBanned(log)
        let longer = try await api.send("PUT", "/v1/bans/\(id)", json: ["seconds": 600])
        XCTAssertEqual(longer.status, 200, longer.text)
        XCTAssertGreaterThan(try longer.object()["until_ms"] as? Int64 ?? 0, Int64(Date().timeIntervalSince1970 * 1000) + 500_000)
        let lifted = try await other2.send("DELETE", "/v1/bans/\(id)")
        XCTAssertEqual(lifted.status, 200, lifted.text)
        XCTAssertEqual(try lifted.object()["lifted"] as? Bool, true)
        try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 601, role: .subscriber), channel: channel, uid: 601, options: .audience)
        let again = try await api.send("DELETE", "/v1/bans/\(id)")
        XCTAssertEqual(again.status, 404, "a lifted rule is not found again: \(again.text)")
        XCTAssertEqual(try again.object()["code"] as? String, "banRuleNotFound")
        do {
            let answer = try await api.send("PUT", "/v1/bans/12345", json: ["seconds": 5])
            XCTAssertEqual(answer.status, 404, answer.text)
        }
        await api.shutdown()
        await other2.shutdown()
        await other.shutdown()
        await viewer.shutdown()
    }

    func testAgorasKickingRulesDisbandAChannelAndBanAUidEverywhere() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-agora-\(UInt32.random(in: 0 ... .max))"
        let app = TestApp.appID
        let host = try await joined(channel, uid: 701, host: true)
        let viewer = try await joined(channel, uid: 702, host: false)
        let hostLog = EventLog(host)
        let viewerLog = EventLog(viewer)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-2"), key: Self.key)
        // time 0 with only cname: everyone goes offline and may come back at once (a disband).
        let disband = try await api.send("POST", "/dev/v1/kicking-rule", json: [
            "appid": app, "cname": channel, "uid": 0, "ip": "", "time": 0, "privileges": ["join_channel"]])
        XCTAssertEqual(disband.status, 200, disband.text)
        XCTAssertEqual(try disband.object()["status"] as? String, "success")
        XCTAssertNotNil(try disband.object()["id"] as? Int)
        try await closedAsBanned(hostLog)
        try await closedAsBanned(viewerLog)
        try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 702, role: .subscriber), channel: channel, uid: 702, options: .audience)
        // A uid everywhere, for a minute: kicked here, and refused in another channel.
        let everywhere = try await api.send("POST", "/dev/v1/kicking-rule", json: [
            "appid": app, "uid": 702, "time_in_seconds": 60, "privileges": ["join_channel"]])
        XCTAssertEqual(everywhere.status, 200, everywhere.text)
        let id = try XCTUnwrap(try everywhere.object()["id"] as? Int)
        try await closedAsBanned(viewerLog)
        await assertFails(.banned, "another channel while banned everywhere") {
            try await viewer.joinChannel(token: try TestApp.token(channel: channel + "-b", uid: 702, role: .subscriber), channel: channel + "-b", uid: 702, options: .audience)
        }
        let updated = try await api.send("PUT", "/dev/v1/kicking-rule", json: ["appid": app, "id": id, "time": 5])
        XCTAssertEqual(updated.status, 200, updated.text)
        let result = try XCTUnwrap(try updated.object()["result"] as? [String: Any])
        XCTAssertEqual(result["id"] as? Int, id)
        XCTAssertNotNil(result["ts"] as? String)
        let deleted = try await api.send("DELETE", "/dev/v1/kicking-rule", json: ["appid": app, "id": id])
        XCTAssertEqual(deleted.status, 200, deleted.text)
        XCTAssertEqual(try deleted.object()["id"] as? Int, id)
        try await viewer.joinChannel(token: try TestApp.token(channel: channel + "-b", uid: 702, role: .subscriber), channel: channel + "-b", uid: 702, options: .audience)
        // Refusals: an address that is not one, no filter ("0" is none), another app, no privileges.
        for notAnAddress in ["10.0.0.1:80", "localhost", "10.0.0.0/8"] {
            let answer = try await api.send("POST", "/dev/v1/kicking-rule", json: ["appid": app, "ip": notAnAddress, "privileges": ["join_channel"]])
            XCTAssertEqual(answer.status, 400, answer.text)
            XCTAssertTrue(answer.text.contains("not an IPv4 or IPv6 address"), answer.text)
        }
        do {
            let answer = try await api.send("POST", "/dev/v1/kicking-rule", json: ["appid": app, "ip": "0", "privileges": ["join_channel"]])
            XCTAssertEqual(answer.status, 400, answer.text)
        }
        do {
            let answer = try await api.send("POST", "/dev/v1/kicking-rule", json: ["appid": app, "privileges": ["join_channel"]])
            XCTAssertEqual(answer.status, 400, answer.text)
        }
        do {
            let answer = try await api.send("POST", "/dev/v1/kicking-rule", json: ["appid": String(repeating: "1", count: 32), "uid": 5, "privileges": ["join_channel"]])
            XCTAssertEqual(answer.status, 401, answer.text)
        }
        do {
            let answer = try await api.send("POST", "/dev/v1/kicking-rule", json: ["appid": app, "uid": 5, "privileges": []])
            XCTAssertEqual(answer.status, 400, answer.text)
        }
        do {
            let answer = try await api.send("DELETE", "/dev/v1/kicking-rule", json: ["appid": app, "id": id])
            XCTAssertEqual(answer.status, 404, answer.text)
        }
        await api.shutdown()
        await viewer.shutdown()
        await host.shutdown()
    }

    func testAnAddressRuleKicksWhoConnectsFromThereWithinASecondAndOnlyThem() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let suffix = UInt32.random(in: 0 ... .max)
        let channel = "api-ip-\(suffix)"
        // Every client of this test connects from 127.0.0.1, as far as the edges see.
        let viewer = try await joined(channel, uid: 801, host: false)
        let host = try await joined(channel, uid: 802, host: true)
        let elsewhere = try await joined(channel + "-b", uid: 803, host: false)
        let (viewerLog, hostLog) = (EventLog(viewer), EventLog(host))
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let app = TestApp.appID

        // Another address, in the channel: both edges take the rule, nobody here is kicked.
        let far = try await api.send("POST", "/v1/bans", json: ["channel": channel, "ip": "10.9.8.7", "privileges": ["join_channel"], "seconds": 60])
        XCTAssertEqual(far.status, 201, far.text)
        XCTAssertEqual(try far.object()["ip"] as? String, "10.9.8.7")
        XCTAssertEqual(try far.object()["edges"] as? Int, 2)
        let farID = try XCTUnwrap(try far.object()["id"] as? Int)
        // One uid from this address in every channel (IPv4-mapped spelling): 803 is kicked, in its own channel.
        let elsewhereLog = EventLog(elsewhere)
        let one = try await api.send("POST", "/v1/bans", json: ["uid": 803, "ip": "::ffff:127.0.0.1", "privileges": ["join_channel"], "seconds": 60])
        XCTAssertEqual(one.status, 201, one.text)
        XCTAssertEqual(try one.object()["ip"] as? String, "127.0.0.1", "kept in the spelling edges compare")
        try await closedAsBanned(elsewhereLog)

        // Agora's form, this address in the channel: everyone here, within a second.
        let asked = ContinuousClock.now
        let rule = try await api.send("POST", "/dev/v1/kicking-rule", json: [
            "appid": app, "cname": channel, "ip": "127.0.0.1", "time_in_seconds": 60, "privileges": ["join_channel"]])
        XCTAssertEqual(rule.status, 200, rule.text)
        let id = try XCTUnwrap(try rule.object()["id"] as? Int)
        try await closedAsBanned(viewerLog)
        try await closedAsBanned(hostLog)
        XCTAssertLessThan(asked.duration(to: .now), .seconds(1), "kicked within a second of the request")
        XCTAssertNotEqual(id, farID)
        // Any uid from here is refused in the channel; another channel is open to it.
        await assertFails(.banned, "another uid from the banned address") {
            try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 804, role: .subscriber), channel: channel, uid: 804, options: .audience)
        }
        try await viewer.joinChannel(token: try TestApp.token(channel: channel + "-c", uid: 801, role: .subscriber),
                                     channel: channel + "-c", uid: 801, options: .audience)
        // Listed with its address, natively and as Agora shows it.
        let listed = try await api.send("GET", "/dev/v1/kicking-rule?appid=\(app)")
        let agoraRule = try XCTUnwrap((try listed.object()["rules"] as? [[String: Any]])?.first { $0["id"] as? Int == id }, listed.text)
        XCTAssertEqual(agoraRule["ip"] as? String, "127.0.0.1")
        XCTAssertEqual(agoraRule["cname"] as? String, channel)
        // Lifted: back in at once.
        for ruleID in [id, farID] {
            let lifted = try await api.send("DELETE", "/dev/v1/kicking-rule", json: ["appid": app, "id": ruleID])
            XCTAssertEqual(lifted.status, 200, lifted.text)
        }
        let oneID = try XCTUnwrap(try one.object()["id"] as? Int)
        let liftedOne = try await api.send("DELETE", "/v1/bans/\(oneID)")
        XCTAssertEqual(liftedOne.status, 200, liftedOne.text)
        try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 801, role: .subscriber), channel: channel, uid: 801, options: .audience)
        // Refused natively: an empty address, a host name, a port.
        for bad: Any in ["", "example.com", "127.0.0.1:9", 7] {
            let answer = try await api.send("POST", "/v1/bans", json: ["channel": channel, "ip": bad, "privileges": ["join_channel"], "seconds": 60])
            XCTAssertEqual(answer.status, 400, "\(bad): \(answer.text)")
        }
        await api.shutdown()
        for engine in [viewer, host, elsewhere] { await engine.shutdown() }
    }

    func testAPKStartedThroughTheAPIIsSeenByTheRoomsViewersAndACoHostIsSeatedAndSteppedDown() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        let suffix = UInt32.random(in: 0 ... .max)
        let (a, b) = ("api-pka-\(suffix)", "api-pkb-\(suffix)")
        for (room, owner) in [(a, 901), (b, 902)] {
            let created = try await api.send("POST", "/v1/rooms", json: ["room_id": room, "name": room, "owner_uid": owner])
            XCTAssertEqual(created.status, 201, created.text)
        }
        let hostA = try await joined(a, uid: 901, host: true, camera: true)
        let hostB = try await joined(b, uid: 902, host: true, camera: true)
        let viewerA = try await joined(a, uid: 911, host: false)
        let viewerB = try await joined(b, uid: 912, host: false)
        let logA = EventLog(viewerA)
        let logB = EventLog(viewerB)
        let started = try await api.send("POST", "/v1/rooms/\(a)/pk", json: ["peer_room_id": b, "duration_s": 600])
        XCTAssertEqual(started.status, 200, started.text)
        XCTAssertEqual(try started.object()["interaction"] as? String, "pk")
        XCTAssertEqual(try started.object()["pk_peer_room_id"] as? String, b)
        // Each room's viewers see the other host in their own channel.
        _ = try await logA.wait("A's viewer sees host B") { if case .userJoined(_, 902) = $0 { true } else { false } }
        _ = try await logB.wait("B's viewer sees host A") { if case .userJoined(_, 901) = $0 { true } else { false } }
        let list = try await api.send("GET", "/v1/pks")
        let pk = try XCTUnwrap((try list.object()["pks"] as? [[String: Any]])?.first { ($0["room_ids"] as? [String])?.contains(a) == true }, list.text)
        XCTAssertEqual(Set(pk["room_ids"] as? [String] ?? []), [a, b])
        XCTAssertEqual(Set(pk["host_uids"] as? [Int] ?? []), [901, 902])
        // A room in a PK starts no second one.
        let again = try await api.send("POST", "/v1/rooms/\(b)/pk", json: ["peer_room_id": a])
        XCTAssertEqual(again.status, 409, again.text)
        let stopped = try await api.send("DELETE", "/v1/rooms/\(b)/pk")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        _ = try await logA.wait("host B leaves A's channel") { if case .userOffline(_, 902, _) = $0 { true } else { false } }
        let none = try await api.send("DELETE", "/v1/rooms/\(b)/pk")
        XCTAssertEqual(none.status, 409, "a room in no PK: \(none.text)")
        // A peer that is not there conflicts with what exists (409), the path's room being there;
        // a path room that is not there is 404.
        let noPeer = try await api.send("POST", "/v1/rooms/\(a)/pk", json: ["peer_room_id": "no-such-room-\(suffix)"])
        XCTAssertEqual(noPeer.status, 409, noPeer.text)
        XCTAssertEqual(try noPeer.object()["code"] as? String, "roomNotFound")
        let noRoom = try await api.send("POST", "/v1/rooms/no-such-room-\(suffix)/pk", json: ["peer_room_id": a])
        XCTAssertEqual(noRoom.status, 404, noRoom.text)

        // A member of room A's audience seated as co-host, then stepped down.
        let rooms = RoomService(seeds: [try cluster.clientEndpoint(of: "coordinator-1")], loop: viewerA.loop)
        _ = try await rooms.joinRoom(a, uid: 911)
        let seated = try await api.send("POST", "/v1/rooms/\(a)/cohosts", json: ["uid": 911])
        XCTAssertEqual(seated.status, 200, seated.text)
        XCTAssertEqual(try seated.object()["cohost_uids"] as? [Int], [911])
        let notInRoom = try await api.send("POST", "/v1/rooms/\(a)/cohosts", json: ["uid": 999])
        XCTAssertEqual(notInRoom.status / 100, 4, "a user not in the room is not seated: \(notInRoom.text)")
        let unseated = try await api.send("DELETE", "/v1/rooms/\(a)/cohosts/911")
        XCTAssertEqual(unseated.status, 200, unseated.text)
        XCTAssertNil(try unseated.object()["cohost_uids"])
        let twice = try await api.send("DELETE", "/v1/rooms/\(a)/cohosts/911")
        XCTAssertEqual(twice.status, 409, "no seat to step down from: \(twice.text)")
        await rooms.shutdown()
        await api.shutdown()
        for engine in [viewerA, viewerB, hostA, hostB] { await engine.shutdown() }
    }

    func testAMuteStopsAPublishersVideoKeepsItInTheChannelAndALiftBringsItBack() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-mute-\(UInt32.random(in: 0 ... .max))"
        let host = try await joined(channel, uid: 951, host: true, camera: true)
        let hostLog = EventLog(host)
        // A viewer decoding the host's video.
        let viewer = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds([try cluster.clientEndpoint(of: "coordinator-1")])))
        let sink = CountingVideoSink()
        try await viewer.setupRemoteVideo(uid: 951, connection: ChannelConnection(channel: channel, uid: 952), sink: sink)
        try await viewer.joinChannel(token: try TestApp.token(channel: channel, uid: 952, role: .subscriber), channel: channel, uid: 952, options: .audience)
        try await eventually("the viewer decodes the host") { sink.statistics.frames > 0 }
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-2"), key: Self.key)
        let muted = try await api.send("POST", "/v1/channels/\(channel)/users/951/mute", json: ["tracks": ["video"], "seconds": 600])
        XCTAssertEqual(muted.status, 200, muted.text)
        XCTAssertEqual(try muted.object()["privileges"] as? [String], ["publish_video"])
        let id = try XCTUnwrap(try muted.object()["id"] as? Int)
        _ = try await hostLog.wait("the host is told its video is stopped") {
            if case .error(_, let error) = $0 { error.code == .banned && error.message.contains("video") } else { false }
        }
        // Still in the channel, still a host.
        try await eventually("the host still listed") {
            let users = try await api.send("GET", "/v1/channels/\(channel)/users")
            return (try users.object()["users"] as? [[String: Any]])?.contains { $0["uid"] as? Int == 951 && $0["role"] as? String == "host" } == true
        }
        let atLift = sink.statistics.frames
        let lifted = try await api.send("DELETE", "/v1/bans/\(id)")
        XCTAssertEqual(lifted.status, 200, lifted.text)
        try await eventually("the host's video comes back to the viewer") { sink.statistics.frames > atLift + 10 }
        let refused = try await api.send("POST", "/v1/channels/\(channel)/users/951/mute", json: ["tracks": ["video", "video", "audio"], "seconds": 5])
        XCTAssertEqual(refused.status, 400, refused.text)
        await api.shutdown()
        await viewer.shutdown()
        await host.shutdown()
    }

    func testAMessageFromTheBusinessServerReachesTheChannelsUsersOrSomeOfThem() async throws {
        let cluster = try XCTUnwrap(Self.cluster)
        let channel = "api-data-\(UInt32.random(in: 0 ... .max))"
        let first = try await joined(channel, uid: 961, host: false)
        let second = try await joined(channel, uid: 962, host: false)
        let firstLog = EventLog(first)
        let secondLog = EventLog(second)
        let api = ServerAPIClient(base: try cluster.apiEndpoint(of: "coordinator-1"), key: Self.key)
        try await eventually("both users listed") {
            let users = try await api.send("GET", "/v1/channels/\(channel)/users")
            return (try users.object()["users"] as? [Any])?.count == 2
        }
        let everyone = try await api.send("POST", "/v1/channels/\(channel)/messages", json: ["data": Data("hello all".utf8).base64EncodedString()])
        XCTAssertEqual(everyone.status, 200, everyone.text)
        XCTAssertEqual(try everyone.object()["delivered"] as? Int, 2)
        for log in [firstLog, secondLog] {
            _ = try await log.wait("the message arrives from uid 0") {
                if case .streamMessage(_, 0, 0, _, let data) = $0 { data == Array("hello all".utf8) } else { false }
            }
        }
        let one = try await api.send("POST", "/v1/channels/\(channel)/messages", json: ["data": Data("just you".utf8).base64EncodedString(), "uids": [962]])
        XCTAssertEqual(try one.object()["delivered"] as? Int, 1, one.text)
        _ = try await secondLog.wait("the message to one user") {
            if case .streamMessage(_, 0, _, _, let data) = $0 { data == Array("just you".utf8) } else { false }
        }
        XCTAssertFalse(firstLog.all.contains { if case .streamMessage(_, 0, _, _, let data) = $0 { data == Array("just you".utf8) } else { false } },
                       "the other user did not get it")
        let tooBig = try await api.send("POST", "/v1/channels/\(channel)/messages", json: ["data": Data(repeating: 1, count: 1025).base64EncodedString()])
        XCTAssertEqual(tooBig.status / 100, 4, tooBig.text)
        let notBase64 = try await api.send("POST", "/v1/channels/\(channel)/messages", json: ["data": "%%%"])
        XCTAssertEqual(notBase64.status, 400, notBase64.text)
        await api.shutdown()
        await first.shutdown()
        await second.shutdown()
    }
}
