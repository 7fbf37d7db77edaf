import ShowroomWire

extension RoomRegistry {
    /// The owner of rooms in `channel` joined (`present`) or left it, as the channel's events say.
    ///
    /// For each open room in the channel owned by `uid`: present clears `ownerOfflineSinceMs`,
    /// absent starts it at `nowMs` (if it was clear). Other uids and rooms are untouched.
    ///
    /// - Returns: One change (no notice) per room whose record changed.
    public mutating func ownerPresence(channel: String, uid: UInt32, present: Bool, nowMs: Int64) -> [RoomChange] {
        guard uid != 0 else { return [] }
        var changes: [RoomChange] = []
        for roomID in roomIDs(inChannel: channel).sorted() {
            guard var room = rooms[roomID], room.state == .open, room.ownerUid == uid else { continue }
            let offlineSince = present ? 0 : (room.ownerOfflineSinceMs == 0 ? nowMs : room.ownerOfflineSinceMs)
            guard offlineSince != room.ownerOfflineSinceMs else { continue }
            room.ownerOfflineSinceMs = offlineSince
            room = Self.bumped(room, nowMs: nowMs)
            put(room)
            changes.append(RoomChange(room: room))
        }
        return changes
    }

    /// Owner presence from a channel's activities, in their order: a join (as broadcaster or
    /// audience) or a switch to broadcaster makes the uid present, a leave or a switch to audience
    /// absent. An owner in the channel keeps their rooms open.
    ///
    /// - Returns: One change (no notice) per room record changed.
    public mutating func ownerPresence(after activities: [RoomChannelActivity], nowMs: Int64) -> [RoomChange] {
        var changes: [RoomChange] = []
        for activity in activities {
            let present: Bool
            switch activity.type {
            case .broadcasterJoined, .roleToBroadcaster, .audienceJoined: present = true
            case .broadcasterLeft, .audienceLeft, .roleToAudience: present = false
            default: continue
            }
            changes += ownerPresence(channel: activity.channel, uid: activity.uid, present: present, nowMs: nowMs)
        }
        return changes
    }

    /// Closes open rooms whose lifetime ended (ROOM_EXPIRED) or whose owner stayed away past the
    /// grace period (ROOM_DESTROYED), and purges closed rooms past their retention. Idempotent:
    /// a second call at the same time changes nothing.
    ///
    /// When both deadlines have passed (the coordinator was not ticking), the one that passed
    /// first names the reason.
    ///
    /// - Parameter closes: Which rooms this holder closes: the owner's alone, so that the closing
    ///   (and its notice) happens once, at the owner, and reaches the other holders as a replica;
    ///   every holder purges its closed copies.
    /// - Returns: The changes, in room id order; a purge is a change with `purged` set and no notice.
    public mutating func tick(nowMs: Int64, closes: (String) -> Bool = { _ in true }) -> [RoomChange] {
        var changes: [RoomChange] = []
        for roomID in rooms.keys.sorted() {
            guard var room = rooms[roomID] else { continue }
            switch room.state {
            case .open:
                guard closes(roomID) else { continue }
                let expired = nowMs >= room.expiresAtMs
                let ownerGoneAt = room.ownerOfflineSinceMs == 0 ? nil : room.ownerOfflineSinceMs + settings.ownerGraceMs
                let ownerGone = ownerGoneAt.map { nowMs >= $0 } ?? false
                let reason: RoomRoomCloseReason
                if ownerGone, let ownerGoneAt, !expired || ownerGoneAt < room.expiresAtMs {
                    reason = .ownerOffline
                } else if expired {
                    reason = .expired
                } else {
                    continue
                }
                endInteractions(ofClosing: &room)
                room.state = .closed
                room.closeReason = reason
                room.closedAtMs = nowMs
                room = Self.bumped(room, nowMs: nowMs)
                put(room)
                changes.append(RoomChange(room: room, notice: reason == .expired ? .roomExpired : .roomDestroyed))
            case .closed:
                guard nowMs >= room.closedAtMs + settings.closedRoomRetentionMs else { continue }
                remove(roomID: roomID)
                changes.append(RoomChange(room: room, purged: true))
            default:
                continue
            }
        }
        return changes
    }
}
