import ShowroomWire

// Between the plane's values and the room-coordinator's contract (proto/showroom/room/rooms.proto):
// channel activities and summaries out, bans in.

extension EdgeCodec {
    /// An activity as the room-coordinator receives it.
    ///
    /// - Parameters:
    ///   - activity: The activity.
    ///   - atMs: Its time on the wall clock, ms since the Unix epoch (the shell converts from the
    ///     plane's clock).
    /// - Returns: The `ChannelActivity` message.
    public static func wire(_ activity: ChannelActivity, atMs: Int64) -> RoomChannelActivity {
        var wire = RoomChannelActivity()
        wire.type = RoomChannelEventType(rawValue: activity.kind.rawValue) ?? .unspecified
        wire.channel = activity.channel
        wire.uid = activity.uid
        if let reason = activity.reason {
            wire.reason = RoomChannelLeaveReason(rawValue: reason.rawValue) ?? .unspecified
        }
        wire.atMs = atMs
        return wire
    }

    /// A channel summary as the room-coordinators' status view receives it.
    ///
    /// - Parameters:
    ///   - summary: The channel.
    ///   - edge: This edge's node id.
    /// - Returns: The `ChannelStatus` message.
    public static func wire(_ summary: ChannelSummary, edge: String) -> RoomChannelStatus {
        var wire = RoomChannelStatus()
        wire.name = summary.name
        wire.edge = edge
        wire.publishers = summary.broadcasters
        wire.subscribers = UInt32(clamping: summary.connections)
        wire.forwardedPublishers = summary.forwardedPublishers
        wire.originEdge = summary.originEdge
        wire.recording = summary.recording
        return wire
    }

    /// The bans of an `EDGE_BANS` request (or a `BAN_LIST` answer), checked and placed on the
    /// plane's clock. All or nothing: one bad ban refuses the lot.
    ///
    /// - Parameters:
    ///   - wire: The bans. No privileges means a join ban (everything), as in a kick.
    ///   - now: The plane's clock now.
    ///   - unixNowMs: The wall clock now, ms since the Unix epoch.
    /// - Returns: The bans, ending at `now + (untilMs − unixNowMs)`.
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` for a ban with no filter (no channel, uid 0
    ///   and no address), an address not in its canonical spelling, or a privilege other than 1
    ///   (join), 2 (publish audio), 3 (publish video).
    public static func bans(_ wire: [RoomBan], now: Duration, unixNowMs: Int64) throws(ShowroomError) -> [ChannelBan] {
        try wire.enumerated().map { (index, ban) throws(ShowroomError) -> ChannelBan in
            // "" is every channel, uid 0 everyone, ip "" any address (a ban rule); not all three.
            guard !ban.channel.isEmpty || ban.uid != 0 || !ban.ip.isEmpty else {
                throw .invalidArgument("ban \(index + 1) names no channel, uid or address")
            }
            guard ban.ip.isEmpty || IPAddress.canonical(ban.ip) == ban.ip else {
                throw .invalidArgument("ban \(index + 1) names address '\(ban.ip.prefix(48))', not an IP address as the coordinators spell it")
            }
            var privileges: Set<Privilege> = []
            for number in ban.privileges {
                switch number {
                case 1: privileges.insert(.join)
                case 2: privileges.insert(.publishAudio)
                case 3: privileges.insert(.publishVideo)
                default:
                    throw .invalidArgument(
                        "ban \(index + 1) (uid \(ban.uid) in channel \(ban.channel)) lists privilege \(number); bans cover 1 join, 2 publish audio, 3 publish video")
                }
            }
            // A lifted ban lists none: it kicks nobody and is forgotten.
            if ban.lifted { privileges = [] } else if privileges.isEmpty { privileges = [.join] }
            // Saturate: a ban years away (or long past) must not overflow the clock arithmetic.
            let remainingMs = ban.untilMs.subtractingReportingOverflow(unixNowMs)
            let clamped = remainingMs.overflow ? (ban.untilMs > unixNowMs ? Int64.max : Int64.min) : remainingMs.partialValue
            let bounded = min(max(clamped, -(1 << 40)), 1 << 40)
            return ChannelBan(
                channel: ban.channel, uid: ban.uid, privileges: privileges, until: now + .milliseconds(bounded),
                untilMs: ban.untilMs, ip: ban.ip)
        }
    }

    /// The most uids a stage lists (the owner, eight co-hosts, a forwarded PK host, with room to spare).
    public static let maxStageUIDs = 16

    /// The most channels one answer may send elsewhere.
    public static let maxChannelsElsewhere = 1_000

    /// Channels placed on other edges, from a room-coordinator's answer to a report, checked: a
    /// valid channel name and an edge id, client endpoint and CURVE key of sane sizes.
    ///
    /// - Throws: `INVALID_ARGUMENT` naming the first that is not (nothing is taken).
    public static func elsewhere(_ wire: [RoomChannelElsewhere]) throws(ShowroomError) -> [ChannelPlacedElsewhere] {
        guard wire.count <= maxChannelsElsewhere else {
            throw .invalidArgument("an answer sends at most \(maxChannelsElsewhere) channels elsewhere, not \(wire.count)")
        }
        return try wire.enumerated().map { (index, item) throws(ShowroomError) -> ChannelPlacedElsewhere in
            do throws(ShowroomError) {
                try Names.validateChannel(item.channel)
            } catch {
                throw .invalidArgument("channel elsewhere \(index + 1): \(error.message)")
            }
            let edge = item.placedOn
            guard (1...64).contains(edge.edgeID.utf8.count), (1...256).contains(edge.clientEndpoint.utf8.count),
                  edge.clientCurvePublicKey.isEmpty || edge.clientCurvePublicKey.utf8.count == 40 else {
                throw .invalidArgument(
                    "channel elsewhere \(index + 1) (\(item.channel)) names no usable edge: an id of 1–64 bytes, an endpoint of 1–256 bytes and an empty or 40-character CURVE key")
            }
            return ChannelPlacedElsewhere(channel: item.channel, placedOn: edge)
        }
    }

    /// Stages from an `EDGE_STAGE` request, checked.
    ///
    /// - Throws: `INVALID_ARGUMENT` for a stage without a valid channel or room id, with uid 0, or
    ///   listing more than ``maxStageUIDs`` uids; nothing is applied then.
    public static func stages(_ wire: [RoomStage]) throws(ShowroomError) -> [ChannelStage] {
        try wire.enumerated().map { (index, stage) throws(ShowroomError) -> ChannelStage in
            do throws(ShowroomError) {
                try Names.validateChannel(stage.channel)
                try Names.validateRoomID(stage.roomID)
            } catch {
                throw .invalidArgument("stage \(index + 1): \(error.message)")
            }
            guard stage.uids.count <= maxStageUIDs, !stage.uids.contains(0) else {
                throw .invalidArgument("stage \(index + 1) (channel \(stage.channel)) lists uid 0 or more than \(maxStageUIDs) uids")
            }
            return ChannelStage(channel: stage.channel, roomID: stage.roomID, uids: Set(stage.uids), version: stage.version,
                                removed: stage.removed)
        }
    }

    /// The most uids a `CHANNEL_DATA` message names.
    public static let maxChannelDataUIDs = 100

    /// `CHANNEL_DATA`, checked: the channel, the uids it goes to (none: everyone) and the data
    /// (its size is the plane's to check, ``ChannelPlane/sendServerMessage(channel:to:data:)``).
    ///
    /// - Throws: `INVALID_ARGUMENT` for an invalid channel name or more than
    ///   ``maxChannelDataUIDs`` uids.
    public static func channelData(_ request: RoomChannelDataRequest) throws(ShowroomError)
        -> (channel: String, uids: Set<UInt32>, data: [UInt8]) {
        try Names.validateChannel(request.channel)
        guard request.uids.count <= maxChannelDataUIDs else {
            throw .invalidArgument("a message names at most \(maxChannelDataUIDs) uids, not \(request.uids.count)")
        }
        return (request.channel, Set(request.uids), Array(request.data))
    }

    /// `CHANNEL_USERS` answered from `plane`: the request's channel checked first, then
    /// ``channelUsers(_:_:now:unixNowMs:)`` over its connections.
    ///
    /// - Throws: `INVALID_ARGUMENT` for a channel name no channel may have (``Names/validateChannel(_:field:)``).
    public static func channelUsers<Frame>(
        _ request: RoomChannelUsersRequest, in plane: ChannelPlane<Frame>, now: Duration, unixNowMs: Int64
    ) throws(ShowroomError) -> RoomChannelUsersResponse {
        try Names.validateChannel(request.channel)
        return channelUsers(plane.users(in: request.channel), request, now: now, unixNowMs: unixNowMs)
    }

    /// `CHANNEL_USERS`: who of `users` (a channel's on this edge) the request asks for, joins on
    /// the wall clock. Every audience member is counted; at most 10,000 are listed (Agora's rule).
    ///
    /// - Parameters:
    ///   - users: The channel's connections (``ChannelPlane/users(in:)``).
    ///   - request: The request (its channel checked already): one uid or all, hosts only or not.
    ///   - now: The plane's clock.
    ///   - unixNowMs: The wall clock at `now`, ms since the Unix epoch.
    /// - Returns: The answer.
    public static func channelUsers(_ users: [ConnectionSnapshot], _ request: RoomChannelUsersRequest, now: Duration,
                                    unixNowMs: Int64) -> RoomChannelUsersResponse {
        var answer = RoomChannelUsersResponse()
        answer.exists = !users.isEmpty
        for user in users {
            let broadcaster = user.role == .broadcaster
            if !broadcaster { answer.audienceTotal &+= 1 }
            guard request.uid == 0 || user.uid == request.uid, broadcaster || !request.hostsOnly else { continue }
            if !broadcaster, answer.audienceTotal > 10_000 { continue }
            var entry = RoomChannelUser()
            entry.uid = user.uid
            entry.broadcaster = broadcaster
            // Whole milliseconds since the join, as the wire counts them (none before it).
            let (seconds, attoseconds) = (now - user.joinedAt).components
            let ageMs = seconds < 0 ? 0 : seconds.multipliedReportingOverflow(by: 1000).partialValue + attoseconds / 1_000_000_000_000_000
            entry.joinedAtMs = unixNowMs &- ageMs
            answer.users.append(entry)
        }
        return answer
    }
}
