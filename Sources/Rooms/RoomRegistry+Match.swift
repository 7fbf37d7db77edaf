import ShowroomWire

// Random PK match. A room's owner marks the room waiting (until ``RoomSettings/matchWaitMs`` has
// passed) and tells the matcher, the coordinator owning ``RoomRegistry/matchKey``, every second
// while it waits; the matcher's queue is soft state, so a matcher taking over after a failure has
// it back within a second. The matcher pairs the two longest-waiting rooms and sends MATCHED to
// the owner of the lower id, which starts the PK with the two-key protocol; the other room commits
// only while it still waits. A pairing that fails leaves the rooms waiting, and they are queued
// again.

/// A room waiting for a match, at the matcher.
struct MatchEntry: Sendable, Equatable {
    /// The room (in `fromRoomID`, `fromUid`, `fromChannel`), its duration and its deadline.
    var request: RoomRoomPendingRequest
    /// When its owner last queued it.
    var refreshedAtMs: Int64
}

extension RoomRegistry {
    /// The key whose owner coordinator runs the match queue.
    public static let matchKey = "pk-match"
    /// A queued room its owner has not queued again for this long is dropped (closed, or its owner
    /// lost).
    static let matchRefreshMs: Int64 = 3_000

    /// The owner asks for a random match (or stops waiting, `cancel`).
    ///
    /// - Returns: The change (PK_MATCH_WAITING or PK_MATCH_CANCELLED) and the update for the matcher.
    /// - Throws: `ROOM_BUSY` when the room is not idle; `INTERACTION_NOT_FOUND` for cancelling no
    ///   wait; `INVALID_ARGUMENT` for a duration over the limit; the room errors.
    public mutating func pkMatch(_ request: RoomPkMatchRequest, nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        var room = try ownedOpenRoom(request.roomID, uid: request.uid)
        var outcome = InteractionOutcome()
        if request.cancel {
            guard room.matchWaitingUntilMs > nowMs else {
                throw ShowroomError(.interactionNotFound, "room \(room.roomID) is not waiting for a match")
            }
            room.matchWaitingUntilMs = 0
            outcome.changes.append(record(room, event: .pkMatchCancelled, id: room.roomID, reason: .stopped, by: request.uid, nowMs: nowMs))
            outcome.peerUpdates.append(Self.matchUpdate(.matchDequeue, for: room))
            return outcome
        }
        guard request.durationS <= Self.maxPkDurationS else {
            throw .invalidArgument("duration_s is \(request.durationS); a PK lasts at most \(Self.maxPkDurationS) s (0 = until stopped)")
        }
        try requireIdle(room, for: "a PK")
        if room.matchWaitingUntilMs <= nowMs {
            room.matchWaitingUntilMs = nowMs + settings.matchWaitMs
            room.matchDurationS = request.durationS
            outcome.changes.append(record(room, event: .pkMatchWaiting, id: room.roomID, by: request.uid, nowMs: nowMs))
        }
        outcome.peerUpdates.append(Self.matchUpdate(.matchEnqueue, for: rooms[room.roomID] ?? room))
        return outcome
    }

    /// The queue updates for the waiting rooms `owns` says this coordinator owns (sent every tick).
    public func matchEnqueues(nowMs: Int64, owns: (String) -> Bool) -> [RoomPeerUpdateRequest] {
        rooms.values.filter { $0.state == .open && $0.matchWaitingUntilMs > nowMs && !$0.hasPkIntent && owns($0.roomID) }
            .sorted { $0.roomID < $1.roomID }
            .map { Self.matchUpdate(.matchEnqueue, for: $0) }
    }

    static func matchUpdate(_ op: RoomPeerOp, for room: RoomRoom) -> RoomPeerUpdateRequest {
        RoomPeerUpdateRequest.with {
            $0.op = op
            $0.roomID = matchKey
            $0.request.fromRoomID = room.roomID
            $0.request.fromUid = room.ownerUid
            $0.request.fromChannel = room.channel
            $0.request.durationS = room.matchDurationS
            $0.request.expiresAtMs = room.matchWaitingUntilMs
            $0.request.mediaMode = .forward
        }
    }

    /// At the matcher: queues (or refreshes) a waiting room, then pairs the two that waited
    /// longest.
    ///
    /// - Returns: MATCHED for the owner of the lower room id of a pair, if one was made.
    mutating func enqueueMatch(_ update: RoomPeerUpdateRequest, nowMs: Int64) throws(ShowroomError) -> [RoomPeerUpdateRequest] {
        let request = update.request
        try Names.validateRoomID(request.fromRoomID)
        try Names.validateChannel(request.fromChannel)
        guard request.fromUid != 0, request.durationS <= Self.maxPkDurationS else {
            throw .invalidArgument("a match entry names the room's owner and a duration up to \(Self.maxPkDurationS) s")
        }
        if var held = matchQueue[request.fromRoomID] {
            held.request.expiresAtMs = request.expiresAtMs
            held.request.durationS = request.durationS
            held.refreshedAtMs = nowMs
            matchQueue[request.fromRoomID] = held
        } else {
            var entry = request
            entry.createdAtMs = nowMs
            matchQueue[request.fromRoomID] = MatchEntry(request: entry, refreshedAtMs: nowMs)
        }
        matchQueue = matchQueue.filter { $0.value.request.expiresAtMs > nowMs && $0.value.refreshedAtMs + Self.matchRefreshMs > nowMs }
        let waiting = matchQueue.values.map(\.request).sorted { ($0.createdAtMs, $0.fromRoomID) < ($1.createdAtMs, $1.fromRoomID) }
        guard waiting.count >= 2 else { return [] }
        let (first, second) = waiting[0].fromRoomID < waiting[1].fromRoomID ? (waiting[0], waiting[1]) : (waiting[1], waiting[0])
        matchQueue[first.fromRoomID] = nil
        matchQueue[second.fromRoomID] = nil
        matchSequence += 1
        var pairing = RoomRoomPendingRequest()
        pairing.id = "pk-m\(nowMs)-\(matchSequence)"
        pairing.fromRoomID = first.fromRoomID
        pairing.fromUid = first.fromUid
        pairing.fromChannel = first.fromChannel
        pairing.toRoomID = second.fromRoomID
        pairing.toUid = second.fromUid
        pairing.toChannel = second.fromChannel
        pairing.createdAtMs = nowMs
        pairing.expiresAtMs = min(first.expiresAtMs, second.expiresAtMs)
        pairing.durationS = first.durationS
        pairing.mediaMode = .forward
        return [RoomPeerUpdateRequest.with {
            $0.op = .matched
            $0.roomID = first.fromRoomID
            $0.request = pairing
            $0.event = .pkStarted
        }]
    }

    /// At the owner of a matched pair's lower room: starts the PK if the room still waits and is
    /// idle; otherwise nothing (the other room stays waiting and is queued again).
    mutating func startMatched(_ update: RoomPeerUpdateRequest, nowMs: Int64) throws(ShowroomError) -> InteractionOutcome {
        guard update.request.fromRoomID == update.roomID, let room = rooms[update.roomID], room.state == .open,
              room.matchWaitingUntilMs > nowMs,
              update.request.kind == .unspecified, !update.request.id.isEmpty, !update.request.toRoomID.isEmpty
        else { return InteractionOutcome() }
        do {
            try requireIdle(room, for: "a PK")
        } catch {
            return InteractionOutcome()
        }
        return try beginPK(room, invitation: update.request, nowMs: nowMs)
    }
}
