import Foundation
import Rooms
import ShowroomWire

/// Ban rules, native (`/v1/bans`) and Agora's (`/dev/v1/kicking-rule`): one `BAN_RULE` request to
/// the coordinator each, which keeps the rule, replicates it and has every edge enforce it before
/// it answers.
extension ServerAPIHandler {
    /// Asks the coordinator for one change of the rules, or the list.
    func banRules(_ change: RoomBanRuleRequest.OneOf_Change) async throws(ShowroomError) -> RoomBanRuleResponse {
        var request = RoomBanRuleRequest()
        request.change = change
        return try await ask(.banRule, request, face: .cluster, expecting: RoomBanRuleResponse.self)
    }

    /// The one rule a change answers with.
    func changed(_ change: RoomBanRuleRequest.OneOf_Change) async throws(ShowroomError) -> (RoomBan, Int32) {
        let answer = try await banRules(change)
        guard let rule = answer.rules.first else { throw .internal("the coordinator answered a ban rule change with no rule") }
        return (rule, Int32(clamping: answer.edges))
    }

    /// A rule as the API shows it; a kick (`kept` false) has no id: it keeps no rule.
    static func banRule(_ ban: RoomBan, edges: Int32? = nil, kept: Bool = true) -> Components.Schemas.BanRule {
        .init(
            id: kept ? Int64(BanList.ruleID(of: ban)) : nil,
            channel: ban.channel.isEmpty ? nil : ban.channel, uid: ban.uid == 0 ? nil : Int64(ban.uid),
            ip: ban.ip.isEmpty ? nil : ban.ip, privileges: ban.privileges.compactMap(Self.privilege), untilMs: ban.untilMs, createdAtMs: ban.createdAtMs,
            updatedAtMs: ban.updatedAtMs, lifted: ban.lifted, edges: edges)
    }

    /// A rule id from the path or a body: 1 to 2³¹−1.
    static func ruleID(_ value: Int64) throws(ShowroomError) -> UInt64 {
        guard (1...Int64(Int32.max)).contains(value) else { throw .invalidArgument("a ban rule id is 1 to 2147483647, not \(value)") }
        return UInt64(value)
    }

    // MARK: - Native

    func listBans(_ input: Operations.ListBans.Input) async throws -> Operations.ListBans.Output {
        let answer = try await banRules(.list(true))
        return .ok(.init(body: .json(.init(rules: answer.rules.map { Self.banRule($0) }))))
    }

    func createBan(_ input: Operations.CreateBan.Input) async throws -> Operations.CreateBan.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the rule as JSON") }
        guard (0...86_430).contains(body.seconds) else { throw ShowroomError.invalidArgument("seconds must be 0 to 86430, not \(body.seconds)") }
        guard (1...3).contains(body.privileges.count) else { throw ShowroomError.invalidArgument("privileges lists 1 to 3 of join_channel, publish_audio, publish_video") }
        if body.channel == "" { throw ShowroomError.invalidArgument("channel is empty; leave it out to ban the uid in every channel") }
        if body.ip == "" { throw ShowroomError.invalidArgument("ip is empty; leave it out to ban from every address") }
        var create = RoomBanRuleCreate()
        create.channel = body.channel ?? ""
        create.uid = try body.uid.map { v throws(ShowroomError) in try Self.uid(v, field: "uid") } ?? 0
        create.ip = body.ip ?? ""
        create.privileges = body.privileges.map(Self.privilegeNumber)
        create.seconds = UInt32(body.seconds)
        let (rule, edges) = try await changed(.create(create))
        // A kick keeps no rule: nothing was created.
        return create.seconds == 0 ? .ok(.init(body: .json(Self.banRule(rule, edges: edges, kept: false))))
            : .created(.init(body: .json(Self.banRule(rule, edges: edges))))
    }

    func updateBan(_ input: Operations.UpdateBan.Input) async throws -> Operations.UpdateBan.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the change as JSON") }
        guard (0...86_430).contains(body.seconds) else { throw ShowroomError.invalidArgument("seconds must be 0 to 86430, not \(body.seconds)") }
        var update = RoomBanRuleUpdate()
        update.id = try Self.ruleID(input.path.id)
        update.seconds = UInt32(body.seconds)
        let (rule, edges) = try await changed(.update(update))
        return .ok(.init(body: .json(Self.banRule(rule, edges: edges))))
    }

    func deleteBan(_ input: Operations.DeleteBan.Input) async throws -> Operations.DeleteBan.Output {
        let (rule, edges) = try await changed(.deleteID(try Self.ruleID(input.path.id)))
        return .ok(.init(body: .json(Self.banRule(rule, edges: edges))))
    }

    // MARK: - Agora

    /// Agora's duration: `time_in_seconds` clamped to [10, 86430] wins, else `time` in minutes
    /// clamped to [1, 1440]; 0 (either) kicks once; neither, 60 minutes.
    static func agoraSeconds(time: Int32?, timeInSeconds: Int32?) throws(ShowroomError) -> UInt32 {
        // Past the range a value is clamped into; far past it, a mistake worth saying.
        guard (0...1_000_000).contains(time ?? 0), (0...100_000_000).contains(timeInSeconds ?? 0) else {
            throw .invalidArgument("time is 0 (a kick) to 1440 minutes and time_in_seconds 0 to 86430 (larger values up to 1000000 and 100000000 are clamped)")
        }
        if let seconds = timeInSeconds { return seconds <= 0 ? 0 : UInt32(min(max(seconds, 10), 86_430)) }
        if let minutes = time { return minutes <= 0 ? 0 : UInt32(min(max(minutes, 1), 1_440)) * 60 }
        return 3_600
    }

    /// Agora's times: ISO 8601 UTC with milliseconds.
    static func agoraTime(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    func agoraListKickingRules(_ input: Operations.AgoraListKickingRules.Input) async throws -> Operations.AgoraListKickingRules.Output {
        try checkAppID(input.query.appid)
        let answer = try await banRules(.list(true))
        return .ok(.init(body: .json(.init(status: .success, rules: answer.rules.map { ban in
            .init(id: Int64(BanList.ruleID(of: ban)), appid: appID, uid: Int64(ban.uid), opid: 0,
                  cname: ban.channel, ip: ban.ip, ts: Self.agoraTime(ban.untilMs), privileges: ban.privileges.compactMap(Self.privilege),
                  createAt: Self.agoraTime(ban.createdAtMs), updateAt: Self.agoraTime(ban.updatedAtMs))
        }))))
    }

    func agoraCreateKickingRule(_ input: Operations.AgoraCreateKickingRule.Input) async throws -> Operations.AgoraCreateKickingRule.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the rule as JSON") }
        try checkAppID(body.appid)
        guard (1...3).contains(body.privileges.count) else { throw ShowroomError.invalidArgument("privileges lists 1 to 3 of join_channel, publish_audio, publish_video") }
        var create = RoomBanRuleCreate()
        // Agora: absent, "" and 0 are no filter.
        create.channel = body.cname ?? ""
        if let uid = body.uid, uid != 0 { create.uid = try Self.uid(uid, field: "uid") }
        if let ip = body.ip, ip != "0" { create.ip = ip }
        create.privileges = body.privileges.map(Self.privilegeNumber)
        create.seconds = try Self.agoraSeconds(time: body.time, timeInSeconds: body.timeInSeconds)
        let (rule, _) = try await changed(.create(create))
        return .ok(.init(body: .json(.init(status: .success, id: Int64(BanList.ruleID(of: rule))))))
    }

    func agoraUpdateKickingRule(_ input: Operations.AgoraUpdateKickingRule.Input) async throws -> Operations.AgoraUpdateKickingRule.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the change as JSON") }
        try checkAppID(body.appid)
        var update = RoomBanRuleUpdate()
        update.id = try Self.ruleID(body.id)
        update.seconds = try Self.agoraSeconds(time: body.time, timeInSeconds: body.timeInSeconds)
        let (rule, _) = try await changed(.update(update))
        return .ok(.init(body: .json(.init(status: .success, result: .init(id: Int64(update.id), ts: Self.agoraTime(rule.untilMs))))))
    }

    func agoraDeleteKickingRule(_ input: Operations.AgoraDeleteKickingRule.Input) async throws -> Operations.AgoraDeleteKickingRule.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the rule's id as JSON") }
        try checkAppID(body.appid)
        let id = try Self.ruleID(body.id)
        _ = try await changed(.deleteID(id))
        return .ok(.init(body: .json(.init(status: .success, id: Int64(id)))))
    }
}

extension ServerAPIHandler {
    /// A mute is a ban rule on publishing: the edges stop the user's tracks of those kinds at once
    /// and tell it; it stays in the channel.
    func muteUser(_ input: Operations.MuteUser.Input) async throws -> Operations.MuteUser.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the mute as JSON") }
        guard (1...86_430).contains(body.seconds) else { throw ShowroomError.invalidArgument("seconds must be 1 to 86430, not \(body.seconds)") }
        guard (1...2).contains(body.tracks.count) else { throw ShowroomError.invalidArgument("tracks lists audio, video or both") }
        var create = RoomBanRuleCreate()
        create.channel = input.path.channel
        create.uid = try Self.uid(input.path.uid, field: "uid")
        create.privileges = Array(Set(body.tracks.map { $0 == .audio ? UInt32(2) : UInt32(3) })).sorted()
        create.seconds = UInt32(body.seconds)
        let (rule, edges) = try await changed(.create(create))
        return .ok(.init(body: .json(Self.banRule(rule, edges: edges))))
    }
}
