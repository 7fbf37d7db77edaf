import ShowroomWire

extension BanList {
    /// The longest ban a kick may ask for: a day.
    public static let maxBanSeconds: UInt32 = 86_400

    /// The ban a kick request asks for, checked: a channel and a non-zero uid, at most a day,
    /// privileges among join (1), publish audio (2) and publish video (3) — none means join. A kick
    /// without a ban still closes the connection: a ban that ends a second from `nowMs`. The
    /// request's admin signature is the caller's to verify.
    ///
    /// - Throws: `INVALID_ARGUMENT`, saying what to change.
    public static func ban(for request: RoomKickRequest, nowMs: Int64) throws(ShowroomError) -> RoomBan {
        guard request.uid != 0 else {
            throw .invalidArgument("a kick names a non-zero uid")
        }
        // A ban is stored and replicated to every coordinator and edge: only a channel a client
        // could be in is worth one.
        try Names.validateChannel(request.channel)
        guard request.banSeconds <= maxBanSeconds else {
            throw .invalidArgument("ban of \(request.banSeconds) s is over a day (\(maxBanSeconds) s)")
        }
        if let bad = request.privileges.first(where: { !(1...3).contains($0) }) {
            throw .invalidArgument("privilege \(bad) cannot be banned; use 1 (join), 2 (publish audio) or 3 (publish video)")
        }
        var ban = RoomBan()
        ban.channel = request.channel
        ban.uid = request.uid
        ban.privileges = request.privileges.isEmpty ? [joinPrivilege] : request.privileges
        ban.untilMs = nowMs &+ Int64(max(1, request.banSeconds)) * 1000
        return ban
    }
}
