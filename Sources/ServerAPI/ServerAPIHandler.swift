import Foundation
import NodeRuntime
import OpenAPIRuntime
import OperatorTools
import Rooms
import Ownership
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf
import Synchronization

/// Where the API's requests go: the coordinator's own request handling, in this process.
protocol CoordinatorAccess: Sendable {
    /// The coordinator's node id.
    var nodeID: String { get }
    /// Serves `request` as the coordinator's `face` would (``Node/serve(_:face:)``).
    /// - Throws: `unavailable` while the coordinator is not up yet.
    func serve(_ request: WireEnvelope, face: RequestFace) async throws(ShowroomError) -> WireEnvelope
    /// The cluster's members as this coordinator sees them.
    func clusterStatus() async throws(ShowroomError) -> AdminClusterStatus
    /// The cluster endpoints of the alive members of `role`, by member id.
    func alive(_ role: NodeRole) async throws(ShowroomError) -> [(id: String, endpoint: String)]
    /// Asks the member at `endpoint` (a cluster endpoint) and reads its answer.
    func request<Response: SwiftProtobuf.Message>(
        _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message & Sendable, to endpoint: String, expecting: Response.Type
    ) async throws(ShowroomError) -> Response
}

/// The operations of the document (proto/api/openapi.yaml), each a thin mapping onto a request
/// the coordinator already serves: the same message, the same checks, the same passing to the
/// owner as on its client endpoint. Errors are thrown as ``ShowroomError`` and made into JSON by
/// ``APIGuard``.
struct ServerAPIHandler: APIProtocol {
    let coordinator: any CoordinatorAccess
    /// The app this cluster serves: Agora's paths name it.
    let appID: String
    /// Signs the admin requests (close, kick) as a business server would.
    let appCertificate: String
    let nowMs: @Sendable () -> Int64
    /// The coordinator's webhooks.
    var webhooks = APIWebhooks(urls: [], signed: false, dispatcher: nil)

    private static let requestIDs = Atomic<UInt64>(0)

    /// Asks the coordinator `kind` with `body` on `face` and reads the answer.
    func ask<Response: SwiftProtobuf.Message>(
        _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, face: RequestFace = .client, expecting: Response.Type
    ) async throws(ShowroomError) -> Response {
        let id = Self.requestIDs.wrappingAdd(1, ordering: .relaxed).newValue
        let request = try WireEnvelope(request: kind, id: id == 0 ? 1 : id, body: body, deadlineMs: 3000)
        let answer = try await coordinator.serve(request, face: face)
        if let failure = answer.failure { throw failure }
        return try answer.decodeBody(Response.self)
    }

    /// An administrator's signature of `action` on `target`, as a business server signs it.
    func adminSignature(_ action: String, target: String, uid: UInt32 = 0) -> RoomAdminSignature {
        AdminSigner.sign(action: action, target: target, uid: uid, issuedAtMs: nowMs(), appCertificate: appCertificate)
    }

    // MARK: - Service

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        .ok(.init(body: .json(.init(status: .ok, node: coordinator.nodeID))))
    }

    /// The document, parsed once.
    private static let document: Result<OpenAPIObjectContainer, ShowroomError> = {
        do {
            return .success(try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(openAPIDocumentJSON.utf8)))
        } catch {
            return .failure(.internal("the built-in OpenAPI document does not parse: \(error)"))
        }
    }()

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(try Self.document.get())))
    }

    // MARK: - Rooms

    func listRooms(_ input: Operations.ListRooms.Input) async throws -> Operations.ListRooms.Output {
        var request = RoomListRoomsRequest()
        if let size = input.query.pageSize {
            guard (1...100).contains(size) else { throw ShowroomError.invalidArgument("page_size must be 1 to 100, not \(size)") }
            request.pageSize = UInt32(size)
        }
        if let token = input.query.pageToken {
            guard Self.isPageToken(token) else {
                throw ShowroomError.invalidArgument("page_token is not one a page handed out; pass the next_page_token of the page before unchanged")
            }
            request.pageToken = token
        }
        let page = try await ask(.roomList, request, expecting: RoomListRoomsResponse.self)
        return .ok(.init(body: .json(.init(
            rooms: page.rooms.map(Self.room), nextPageToken: page.nextPageToken.isEmpty ? nil : page.nextPageToken,
            total: Int64(page.total)))))
    }

    func createRoom(_ input: Operations.CreateRoom.Input) async throws -> Operations.CreateRoom.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the room as JSON") }
        var request = RoomCreateRoomRequest()
        // Empty means "make one" on the wire; here that is an absent room_id.
        if body.roomId == "" { throw ShowroomError.invalidArgument("room_id is empty; leave it out to have the cluster make one") }
        if body.channel == "" { throw ShowroomError.invalidArgument("channel is empty; leave it out to use the room id") }
        request.roomID = body.roomId ?? ""
        request.name = body.name
        request.ownerUid = try Self.uid(body.ownerUid, field: "owner_uid")
        request.ownerName = body.ownerName ?? ""
        // The document's bound (characters, which JSON Schema counts) keeps within the wire's 512 bytes.
        if let avatar = body.ownerAvatar, avatar.unicodeScalars.count > 128 {
            throw ShowroomError.invalidArgument("owner_avatar is \(avatar.unicodeScalars.count) characters; it is at most 128")
        }
        request.ownerAvatar = body.ownerAvatar ?? ""
        request.channel = body.channel ?? ""
        if let seats = body.seats {
            guard (1...8).contains(seats) else { throw ShowroomError.invalidArgument("seats must be 1 to 8, not \(seats)") }
            request.seats = UInt32(seats)
        }
        let created = try await ask(.roomCreate, request, expecting: RoomCreateRoomResponse.self)
        return .created(.init(body: .json(Self.room(created.room))))
    }

    func getRoom(_ input: Operations.GetRoom.Input) async throws -> Operations.GetRoom.Output {
        .ok(.init(body: .json(Self.room(try await room(input.path.roomId)))))
    }

    func updateRoom(_ input: Operations.UpdateRoom.Input) async throws -> Operations.UpdateRoom.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the change as JSON") }
        // Nothing to change: the room as it is (a PATCH of nothing is no error).
        guard body.name != nil || body.metadata != nil else {
            return .ok(.init(body: .json(Self.room(try await room(input.path.roomId)))))
        }
        var request = RoomUpdateRoomRequest()
        request.roomID = input.path.roomId
        if let name = body.name { request.name = name }
        if let metadata = body.metadata {
            guard metadata.unicodeScalars.count <= 1024 else {
                throw ShowroomError.invalidArgument("metadata is \(metadata.unicodeScalars.count) characters; it is at most 1024 here")
            }
            request.metadata = metadata
        }
        request.admin = adminSignature("update-room", target: request.roomID)
        let answer = try await ask(.roomUpdate, request, expecting: RoomUpdateRoomResponse.self)
        return .ok(.init(body: .json(Self.room(answer.room))))
    }

    func closeRoom(_ input: Operations.CloseRoom.Input) async throws -> Operations.CloseRoom.Output {
        var request = RoomCloseRoomRequest()
        request.roomID = input.path.roomId
        request.admin = adminSignature("close-room", target: request.roomID)
        let answer = try await ask(.roomClose, request, expecting: RoomCloseRoomResponse.self)
        return .ok(.init(body: .json(Self.room(answer.room))))
    }

    // MARK: - Moderation

    func kickUser(_ input: Operations.KickUser.Input) async throws -> Operations.KickUser.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the kick as JSON") }
        var request = RoomKickRequest()
        request.channel = input.path.channel
        request.uid = try Self.uid(body.uid, field: "uid")
        if let seconds = body.banSeconds {
            guard (0...86_400).contains(seconds) else { throw ShowroomError.invalidArgument("ban_seconds must be 0 to 86400, not \(seconds)") }
            request.banSeconds = UInt32(seconds)
        }
        let privileges = body.privileges ?? []
        guard privileges.count <= 3 else { throw ShowroomError.invalidArgument("privileges lists at most the 3 there are, not \(privileges.count)") }
        request.privileges = privileges.map(Self.privilegeNumber)
        request.admin = adminSignature("kick", target: request.channel, uid: request.uid)
        let answer = try await ask(.kick, request, expecting: RoomKickResponse.self)
        let banned = answer.hasBan && answer.ban.untilMs > 0
        return .ok(.init(body: .json(.init(
            edges: Int32(clamping: answer.edges),
            bannedUntilMs: banned ? answer.ban.untilMs : nil,
            privileges: banned ? answer.ban.privileges.compactMap(Self.privilege) : nil))))
    }

    // MARK: - Cluster

    /// The status view's data, gathered as `showroomctl status` gathers it: the members, the
    /// channels with their edges and relays, the open rooms (a page of 100) with their PKs and
    /// co-hosts, and the calls.
    func getCluster(_ input: Operations.GetCluster.Input) async throws -> Operations.GetCluster.Output {
        let status = try await coordinator.clusterStatus()
        let channels = try await ask(.channelList, RoomListChannelsRequest(), face: .cluster, expecting: RoomListChannelsResponse.self)
        var page = RoomListRoomsRequest()
        page.pageSize = 100
        let rooms = try await ask(.roomList, page, expecting: RoomListRoomsResponse.self)
        let calls = (try? await calls().calls) ?? []
        let extra = StatusView.Rooms(
            channels: RoomChannelStatus.naming(channels.channels, after: rooms.rooms), rooms: rooms.rooms,
            roomTotal: Int(rooms.total), calls: calls, drainingEdges: Set(channels.drainingEdges))
        let json: String
        do { json = try StatusView.json(status, extra) } catch {
            throw ShowroomError.internal("the cluster status did not convert to JSON: \(error)")
        }
        do {
            return .ok(.init(body: .json(try JSONDecoder().decode(Components.Schemas.ClusterStatus.self, from: Data(json.utf8)))))
        } catch {
            throw ShowroomError.internal("the cluster status did not convert to JSON: \(error)")
        }
    }

    // MARK: - Mapping

    /// A page token as pages hand them out: `<created ms>:<room id>`.
    static func isPageToken(_ token: String) -> Bool {
        let parts = token.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, (1...18).contains(parts[0].utf8.count), parts[0].utf8.allSatisfy({ (48...57).contains($0) }) else {
            return false
        }
        return (try? Names.validateRoomID(String(parts[1]))) != nil
    }

    /// A uid from JSON: 1 to 2³²−1.
    static func uid(_ value: Int64, field: String) throws(ShowroomError) -> UInt32 {
        guard value >= 1, let uid = UInt32(exactly: value) else {
            throw .invalidArgument("\(field) must be a uid, 1 to 4294967295, not \(value)")
        }
        return uid
    }

    /// AccessToken2's privilege numbers: 1 join, 2 publish audio, 3 publish video.
    static func privilegeNumber(_ privilege: Components.Schemas.Privilege) -> UInt32 {
        switch privilege {
        case .joinChannel: 1
        case .publishAudio: 2
        case .publishVideo: 3
        }
    }

    static func privilege(_ number: UInt32) -> Components.Schemas.Privilege? {
        switch number {
        case 1: .joinChannel
        case 2: .publishAudio
        case 3: .publishVideo
        default: nil
        }
    }

    static func room(_ room: RoomRoom) -> Components.Schemas.Room {
        let interaction: Components.Schemas.Room.InteractionPayload
        switch room.interaction.kind {
        case .pk: interaction = .pk
        case .cohost: interaction = .cohost
        case .call: interaction = .call
        default: interaction = .none
        }
        return .init(
            roomId: room.roomID, name: room.name, ownerUid: Int64(room.ownerUid),
            ownerName: room.ownerName.isEmpty ? nil : room.ownerName,
            ownerAvatar: room.ownerAvatar.isEmpty ? nil : room.ownerAvatar,
            channel: room.channel, createdAtMs: room.createdAtMs, expiresAtMs: room.expiresAtMs,
            closed: room.state == .closed, closedAtMs: room.state == .closed ? room.closedAtMs : nil,
            audienceCount: Int64(room.audienceCount), seats: Int32(clamping: max(room.seats, 1)),
            metadata: room.metadata.isEmpty ? nil : room.metadata,
            interaction: interaction,
            pkId: room.interaction.kind == .pk ? room.interaction.id : nil,
            pkPeerRoomId: room.interaction.kind == .pk ? room.interaction.peerRoomID : nil,
            cohostUids: room.interaction.kind == .cohost ? room.interaction.seats.map { Int64($0.uid) } : nil,
            version: Int64(clamping: room.version))
    }
}
