/// What a user's owner node holds of it, as replicated to the successor: its signaling session,
/// the call it is in, and the active call it owns as the callee. A successor that becomes the
/// owner goes on from this record (``CallBook/adopt(_:)``, ``Presence/adopt(_:nowMs:)``).
public struct UserRecord: Sendable, Equatable {
    /// A session without its last-heard time, which changes with every poll and is not worth a
    /// write: an adopting node counts the session as heard at adoption.
    public struct SessionState: Sendable, Equatable {
        /// The session's secret id.
        public var id: String
        /// When the user logged in.
        public var loggedInAtMs: Int64
        /// When its login token expires.
        public var tokenExpiresAtMs: Int64

        /// A session record.
        public init(id: String, loggedInAtMs: Int64, tokenExpiresAtMs: Int64) {
            self.id = id
            self.loggedInAtMs = loggedInAtMs
            self.tokenExpiresAtMs = tokenExpiresAtMs
        }
    }

    /// The call a user is in (or reserved for while dialling), and the node that held it.
    public struct InCall: Sendable, Equatable {
        /// The call's id.
        public var callID: String
        /// The node that owned the call when this was written.
        public var owner: String

        /// A reference to call `callID`, owned by `owner`.
        public init(callID: String, owner: String) {
            self.callID = callID
            self.owner = owner
        }
    }

    /// The user.
    public var uid: UInt32
    /// Its session, when logged in.
    public var session: SessionState?
    /// The call it is in.
    public var inCall: InCall?
    /// The call it is the callee of (so its owner holds it): the active one, else the last one
    /// that ended while its owner keeps it (``CallSettings/retainEndedMs``), so that a copy of
    /// that call still active elsewhere yields to its end (``precedence(_:over:)``).
    public var ownedCall: Call?

    /// A record of `uid`.
    public init(uid: UInt32, session: SessionState? = nil, inCall: InCall? = nil, ownedCall: Call? = nil) {
        self.uid = uid
        self.session = session
        self.inCall = inCall
        self.ownedCall = ownedCall
    }

    /// Whether there is nothing to hold (the user is offline and in no call).
    public var isEmpty: Bool { session == nil && inCall == nil && ownedCall == nil }

    /// Which of two records of one user wins a merge before their versions do (nil: the
    /// versions decide): where a call both hold ended beats where it goes on. After a partition
    /// both sides may have held the call; one ended it and told its parties, while the other's
    /// record, which may have the higher version, would bring it back with nobody in it.
    @Sendable public static func precedence(_ record: UserRecord, over other: UserRecord) -> Bool? {
        guard let call = record.ownedCall, let held = other.ownedCall, call.id == held.id,
              call.isActive != held.isActive else { return nil }
        return !call.isActive
    }

    /// The key the record is owned and replicated under (the user's key in the owner ring).
    public static func key(of uid: UInt32) -> String { "uid/\(uid)" }

    /// The uid a key names, if it is a user's key.
    public static func uid(ofKey key: String) -> UInt32? {
        guard key.hasPrefix("uid/") else { return nil }
        return UInt32(key.dropFirst(4))
    }
}

extension Call {
    /// A call as a replica holds it, every field given (a successor's copy of its owner's call).
    public init(restoring id: String, caller: UInt32, callee: UInt32, type: CallType, channel: String,
                extensionInfo: [String: String], waitsForFirstFrame: Bool, startedAtMs: Int64, phase: Phase,
                sequence: UInt64, deadlineMs: Int64?, acceptedAtMs: Int64?, connectedAtMs: Int64?,
                firstFrames: Set<UInt32>, absentSince: [UInt32: Int64], liveRooms: [UInt32: String] = [:],
                end: End? = nil, endedAtMs: Int64? = nil) {
        self.init(id: id, caller: caller, callee: callee, type: type, channel: channel, extensionInfo: extensionInfo,
                  waitsForFirstFrame: waitsForFirstFrame, startedAtMs: startedAtMs, phase: phase)
        self.sequence = sequence
        self.deadlineMs = deadlineMs
        self.acceptedAtMs = acceptedAtMs
        self.connectedAtMs = connectedAtMs
        self.firstFrames = firstFrames
        self.absentSince = absentSince
        self.liveRooms = liveRooms
        self.end = end
        self.endedAtMs = endedAtMs
    }
}
