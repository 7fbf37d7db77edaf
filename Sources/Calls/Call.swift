/// One 1v1 call as the server holds it: the one record both sides' states are derived from.
public struct Call: Sendable, Equatable {
    /// Where a call is.
    public enum Phase: String, Sendable, Equatable {
        /// Sent to the callee, not answered.
        case ringing
        /// Accepted; waiting for both sides' first remote frames.
        case connecting
        /// Both sides decode each other.
        case connected
        /// Over, for the reason in ``Call/end``.
        case ended
    }

    /// Why a call ended, and who ended it.
    public struct End: Sendable, Equatable {
        /// The ways a call ends.
        public enum Reason: String, Sendable, Equatable {
            /// The caller cancelled before an answer.
            case cancelled
            /// The callee rejected.
            case rejected
            /// A party hung up.
            case hungUp
            /// Not connected within the calling timeout.
            case timedOut
            /// The callee was in another call.
            case busy
            /// A party left the call's channel (or lost signaling) and did not come back within
            /// the grace period.
            case partyLeft
            /// The call reached its maximum length.
            case tooLong
        }

        /// Why.
        public var reason: Reason
        /// The party that ended it, if one did.
        public var by: UInt32?
        /// The text the party gave (a reject or hang-up reason), if any.
        public var message: String

        /// An end for `reason`, by party `by`, with `message`.
        public init(reason: Reason, by: UInt32?, message: String) {
            self.reason = reason
            self.by = by
            self.message = message
        }
    }

    /// The server-minted id every notice of the call carries.
    public let id: String
    /// Who called.
    public let caller: UInt32
    /// Who was called.
    public let callee: UInt32
    /// Video or audio.
    public let type: CallType
    /// The call's private channel: only the two parties may join it, and nobody once it ended.
    public let channel: String
    /// What the caller attached to the call (CallAPI's user and call extensions).
    public let extensionInfo: [String: String]
    /// Whether connected waits for both sides' first remote frames (CallAPI's
    /// `firstFrameWaittingDisabled` turned around).
    public let waitsForFirstFrame: Bool
    /// When the call was made (milliseconds since the Unix epoch).
    public let startedAtMs: Int64
    /// Where the call is.
    public internal(set) var phase: Phase
    /// The sequence number of the call's latest notice: every notice has a greater one than the
    /// notices before it, so a client drops what is stale or repeated.
    public internal(set) var sequence: UInt64 = 0
    /// When the calling timeout ends the call unless it is connected by then; nil once connected.
    public internal(set) var deadlineMs: Int64?
    /// When the callee accepted.
    public internal(set) var acceptedAtMs: Int64?
    /// When both sides decoded each other.
    public internal(set) var connectedAtMs: Int64?
    /// When it ended.
    public internal(set) var endedAtMs: Int64?
    /// Why it ended.
    public internal(set) var end: End?
    /// The parties that decoded the other's first frame.
    public internal(set) var firstFrames: Set<UInt32> = []
    /// The parties away from the call (left its channel or lost signaling), since when.
    public internal(set) var absentSince: [UInt32: Int64] = [:]
    /// The live room each party hosts, if any: from connecting to the end the room shows the call.
    public internal(set) var liveRooms: [UInt32: String] = [:]

    /// Whether `uid` is one of the two parties.
    public func isParty(_ uid: UInt32) -> Bool { uid == caller || uid == callee }

    /// The other party of `uid`.
    public func other(than uid: UInt32) -> UInt32 { uid == caller ? callee : caller }

    /// Whether the call still holds its parties (not ended).
    public var isActive: Bool { phase != .ended }

    /// How long it was connected, in milliseconds (0 if it never was).
    public var connectedDurationMs: Int64 {
        guard let connectedAtMs, let endedAtMs else { return 0 }
        return max(0, endedAtMs - connectedAtMs)
    }
}

/// What one party of a call is told: its new state (or its unchanged one, for an event alone).
public struct CallNotice: Sendable, Equatable {
    /// The call.
    public var callID: String
    /// Greater than every earlier notice of the call.
    public var sequence: UInt64
    /// The party told.
    public var to: UInt32
    /// Its state now.
    public var state: CallState
    /// Why it changed (``CallStateReason/none`` for an event without a change).
    public var reason: CallStateReason
    /// What happened.
    public var event: CallEvent
    /// The call as it is now (channel, the other party, extension, times).
    public var call: Call
}

/// What the call-signal shell must do after a call changed.
public enum CallDirective: Sendable, Equatable {
    /// Tell a party.
    case notify(CallNotice)
    /// Admit nobody to the channel any more: `parties` (a leaver among them) are shut out of it;
    /// nobody else ever held a token for it. Not for a call that ended busy, whose channel was
    /// never handed out.
    case seal(channel: String, parties: [UInt32])
    /// A call started ringing (for events and webhooks).
    case started(Call)
    /// A party's live room enters the call (`inCall`: the call is connecting) or leaves it (the
    /// call ended): its owner coordinator shows it to the room's audience.
    case interaction(roomID: String, owner: UInt32, callID: String, inCall: Bool)
    /// Both sides decode each other (for events and metrics: set-up time).
    case connected(Call)
    /// The call is over (for events, webhooks and metrics: duration, who ended it, why).
    case ended(Call)
}

/// Why a call request was refused, with a stable code and a message a person can act on.
public struct CallRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable codes.
    public enum Code: String, Sendable, Equatable {
        /// The request is malformed (a uid of 0, calling oneself, an oversize extension).
        case invalidArgument
        /// The caller is in another call.
        case callerInCall
        /// The callee is not logged in to signaling.
        case calleeOffline
        /// No such call (or it ended long ago).
        case unknownCall
        /// The requester is not the party the request is for (someone else's call, a caller
        /// accepting its own call).
        case notYourCall
        /// The call is not where the request needs it (cancel after accept): CallAPI's
        /// `stateMismatch`.
        case stateMismatch
        /// The call ended already; the message says how.
        case callEnded
    }

    /// The code.
    public var code: Code
    /// What happened and what to do.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
