import Foundation
import ShowroomWire

/// The channel queries, native (`/v1/channels`) and Agora's (`/dev/v1/channel`): one request to
/// the coordinator each (`CHANNEL_LIST`, `CHANNEL_USERS`), two shapes of the answer.
extension ServerAPIHandler {
    /// The channels as the coordinator's directory has them (every edge reports to every
    /// coordinator), one entry per channel with its edges, by name.
    func channels() async throws(ShowroomError) -> [(name: String, users: Int64, broadcasters: [Int64], edges: [String], roomID: String)] {
        let list = try await ask(.channelList, RoomListChannelsRequest(), face: .cluster, expecting: RoomListChannelsResponse.self)
        var byName: [String: (users: Int64, broadcasters: Set<UInt32>, edges: [String], roomID: String)] = [:]
        for status in list.channels {
            var entry = byName[status.name] ?? (0, [], [], "")
            entry.users += Int64(status.subscribers)
            entry.broadcasters.formUnion(status.publishers)
            entry.edges.append(status.edge)
            if entry.roomID.isEmpty { entry.roomID = status.roomID }
            byName[status.name] = entry
        }
        return byName.keys.sorted().map { name in
            let entry = byName[name]!
            return (name, entry.users, entry.broadcasters.sorted().map(Int64.init), entry.edges.sorted(), entry.roomID)
        }
    }

    /// A page of `items` (Agora's paging: 0-based page, 1–500 a page, default 100; past the end
    /// empty).
    static func page<T>(_ items: [T], pageNo: Int32?, pageSize: Int32?) throws(ShowroomError) -> ArraySlice<T> {
        let number = Int(pageNo ?? 0)
        let size = Int(pageSize ?? 100)
        guard number >= 0, number <= 1_000_000 else { throw .invalidArgument("page_no must be 0 to 1000000, not \(number)") }
        guard (1...500).contains(size) else { throw .invalidArgument("page_size must be 1 to 500, not \(size)") }
        let start = min(items.count, number * size)
        return items[start..<min(items.count, start + size)]
    }

    /// Who is in `channel` (``RoomChannelUsersRequest``), from every edge hosting it.
    func users(in channel: String, hostsOnly: Bool = false, uid: UInt32 = 0) async throws(ShowroomError) -> RoomChannelUsersResponse {
        var request = RoomChannelUsersRequest()
        request.channel = channel
        request.hostsOnly = hostsOnly
        request.uid = uid
        return try await ask(.channelUsers, request, face: .cluster, expecting: RoomChannelUsersResponse.self)
    }

    /// Refuses an app id that is not this cluster's with 401, as Agora does for an unknown App ID.
    func checkAppID(_ appID: String) throws(APIRefusal) {
        guard appID.lowercased() == self.appID.lowercased() else {
            throw APIRefusal(status: .unauthorized, error: ShowroomError(.invalidArgument,
                "invalid appid: \(appID.prefix(40)) is not the app this cluster serves"))
        }
    }

    // MARK: - Native

    func listChannels(_ input: Operations.ListChannels.Input) async throws -> Operations.ListChannels.Output {
        let all = try await channels()
        let page = try Self.page(all, pageNo: input.query.pageNo, pageSize: input.query.pageSize)
        return .ok(.init(body: .json(.init(
            channels: page.map { .init(channel: $0.name, userCount: $0.users, broadcasters: $0.broadcasters, edges: $0.edges,
                                       roomId: $0.roomID.isEmpty ? nil : $0.roomID) },
            total: Int64(all.count)))))
    }

    func listChannelUsers(_ input: Operations.ListChannelUsers.Input) async throws -> Operations.ListChannelUsers.Output {
        .ok(.init(body: .json(try await channelUsers(input.path.channel, hostsOnly: input.query.hostsOnly ?? false))))
    }

    /// The answer of `listChannelUsers` (also served by ``APIHotReads``).
    func channelUsers(_ channel: String, hostsOnly: Bool) async throws(ShowroomError) -> Components.Schemas.ChannelUsers {
        let answer = try await users(in: channel, hostsOnly: hostsOnly)
        return .init(
            exists: answer.exists,
            users: answer.users.map { .init(uid: Int64($0.uid), role: $0.broadcaster ? .host : .audience, joinedAtMs: $0.joinedAtMs, edge: $0.edge) },
            audienceTotal: Int64(answer.audienceTotal), unansweredEdges: answer.unansweredEdges)
    }

    func getChannelUser(_ input: Operations.GetChannelUser.Input) async throws -> Operations.GetChannelUser.Output {
        let uid = try Self.uid(input.path.uid, field: "uid")
        let user = try await users(in: input.path.channel, uid: uid).users.first
        return .ok(.init(body: .json(.init(
            inChannel: user != nil, uid: Int64(uid), role: user.map { $0.broadcaster ? .host : .audience },
            joinedAtMs: user?.joinedAtMs, edge: user?.edge))))
    }

    // MARK: - Agora

    func agoraListChannels(_ input: Operations.AgoraListChannels.Input) async throws -> Operations.AgoraListChannels.Output {
        try checkAppID(input.path.appid)
        let all = try await channels()
        let page = try Self.page(all, pageNo: input.query.pageNo, pageSize: input.query.pageSize)
        return .ok(.init(body: .json(.init(success: true, data: .init(
            channels: page.map { .init(channelName: $0.name, userCount: $0.users) }, totalSize: Int64(all.count))))))
    }

    /// Agora's user list: `channel_exist` false and nothing else for an empty channel; a live
    /// channel's broadcasters, audience and audience total (mode 2).
    func agoraUsers(appID: String, channel: String, hostsOnly: Bool) async throws -> Components.Schemas.AgoraChannelUsers {
        try checkAppID(appID)
        let answer = try await users(in: channel, hostsOnly: hostsOnly)
        guard answer.exists else { return .init(success: true, data: .init(channelExist: false)) }
        return .init(success: true, data: .init(
            channelExist: true, mode: 2,
            broadcasters: answer.users.filter(\.broadcaster).map { Int64($0.uid) },
            audience: hostsOnly ? nil : answer.users.filter { !$0.broadcaster }.map { Int64($0.uid) },
            audienceTotal: hostsOnly ? nil : Int64(answer.audienceTotal)))
    }

    func agoraChannelUsers(_ input: Operations.AgoraChannelUsers.Input) async throws -> Operations.AgoraChannelUsers.Output {
        .ok(.init(body: .json(try await agoraUsers(appID: input.path.appid, channel: input.path.channelName, hostsOnly: false))))
    }

    func agoraChannelHosts(_ input: Operations.AgoraChannelHosts.Input) async throws -> Operations.AgoraChannelHosts.Output {
        .ok(.init(body: .json(try await agoraUsers(appID: input.path.appid, channel: input.path.channelName, hostsOnly: true))))
    }

    func agoraUserProperty(_ input: Operations.AgoraUserProperty.Input) async throws -> Operations.AgoraUserProperty.Output {
        try checkAppID(input.path.appid)
        let uid = try Self.uid(input.path.uid, field: "uid")
        guard let user = try await users(in: input.path.channelName, uid: uid).users.first else {
            return .ok(.init(body: .json(.init(success: true, data: .init(inChannel: false)))))
        }
        return .ok(.init(body: .json(.init(success: true, data: .init(
            inChannel: true, uid: Int64(uid), join: user.joinedAtMs / 1000, role: user.broadcaster ? 2 : 3, platform: 0)))))
    }
}

extension ServerAPIHandler {
    /// LiveKit's SendData: a message to a channel's users, through every edge the channel runs on.
    func sendChannelMessage(_ input: Operations.SendChannelMessage.Input) async throws -> Operations.SendChannelMessage.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the message as JSON") }
        guard body.data.utf8.count <= 1368, let data = Data(base64Encoded: body.data) else {
            throw ShowroomError.invalidArgument("data is the message in base64, at most 1024 bytes once decoded")
        }
        guard data.count <= 1024 else {
            throw ShowroomError(.streamMessageTooLarge, "the message is \(data.count) bytes; at most 1024")
        }
        var request = RoomChannelDataRequest()
        request.channel = input.path.channel
        request.data = data
        let uids = body.uids ?? []
        guard uids.count <= 100 else { throw ShowroomError.invalidArgument("uids lists at most 100 users, not \(uids.count)") }
        for uid in uids { request.uids.append(try Self.uid(uid, field: "uids")) }
        let answer = try await ask(.channelData, request, face: .cluster, expecting: RoomChannelDataResponse.self)
        return .ok(.init(body: .json(.init(delivered: Int64(answer.delivered), unansweredEdges: answer.unansweredEdges))))
    }
}
