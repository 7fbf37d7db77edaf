// Pure: no I/O, no clock, no ambient randomness (only Calls and ReplicatedOwnership, themselves pure).
import ReplicatedOwnership

/// What one call-signal node decides, as a pure state machine: the sessions of the users it owns
/// (``Presence``), the calls it owns (``CallBook``), the call each of its users is in or reserved
/// for while dialling, the notices waiting for each session's poll, the call tokens minted, and
/// which user records are due for replication (``ReplicatedStore``).
///
/// Events go in as plain values with the time (requests already decoded and checked for form,
/// answers from other nodes, clock ticks, membership changes); ``Directive``s come out for the
/// shell to carry out. Randomness (session secrets, call ids, channel names) comes from the
/// injected `Random`, so a node driven by a seeded generator decides the same way every run.
///
/// Ownership: a user (key `uid/<uid>`) is owned by the first alive call-signal node in rendezvous
/// order; a call by its callee's owner (the call id starts with the callee's uid, so any node
/// finds the owner from the id alone). Dialling is the two-key operation: the caller's owner
/// reserves the caller (``dial(_:caller:nowMs:)``), asks the callee's owner to ring
/// (``ring(_:nowMs:)``), and drops the reservation when the ring is refused, fails or ends busy
/// (``ringAnswered(caller:callID:_:)``).
public struct CallSignalNode<Notice, Random: RandomNumberGenerator> {
    /// Why a request was refused, with a stable code and a message a person can act on.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        /// The stable codes (each travels as the wire's error code of the same name).
        public enum Code: String, Sendable, Equatable {
            /// Malformed: a uid of 0, calling oneself, an oversize or foreign call id.
            case invalidArgument
            /// The session is unknown, ended or replaced.
            case notLoggedIn
            /// The caller dialled too often.
            case callRateLimited
            /// The call book's refusals (``CallRefusal/Code``).
            case callerInCall, calleeOffline, unknownCall, notYourCall, stateMismatch, callEnded
            /// Not the call's owner as this node sees the members (the asker's view differs for
            /// a moment): ask again shortly.
            case notOwner
        }

        /// The code.
        public var code: Code
        /// What happened and what to do.
        public var message: String

        /// A refusal with `code` and `message`.
        public init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        /// The refusal of the call book, as the node passes it on.
        public init(_ refusal: CallRefusal) {
            self.init(Code(rawValue: refusal.code.rawValue) ?? .invalidArgument, refusal.message)
        }

        public var description: String { "\(code.rawValue): \(message)" }
    }

    /// A session's notices and its parked poll.
    ///
    /// A notice goes out in two answers: the first poll answer that carries it, and the
    /// session's next one. An answer may never reach the client (both copies of a poll request
    /// that arrived twice are answered, the second copy's with the notices, and the node that
    /// passed the request on relays only the first answer; a client may have given up on a
    /// poll), and the client polls again after every answer: the next answer makes up for a lost
    /// one. The client's filter drops a notice it has taken already.
    public struct Mailbox {
        /// What the next answer carries, oldest first: the notices the last answer carried, then
        /// those no answer carried yet.
        public var notices: [Notice] { (answered + queued).map(\.notice) }
        /// The notices no answer carried yet, each with whether it tells of a state that is not
        /// an active call's (an end, a failure): only those (these and the last answer's) go with
        /// the user to a new owner.
        var queued: [(notice: Notice, ends: Bool)] = []
        /// The notices the last answer carried, once: carried again by the next answer.
        var answered: [(notice: Notice, ends: Bool)] = []
        /// Whether the next poll is answered at once.
        var waiting: Bool { !queued.isEmpty || !answered.isEmpty || tokenWillExpire }
        /// The poll waiting for notices, and until when it waits.
        public var parked: (poll: UInt64, untilMs: Int64)?
        /// Whether the next answer tells the session its login token expires soon.
        public var tokenWillExpire = false

        /// Answers poll `poll` with what waits: the notices carried for the first time are kept
        /// for the next answer, those carried for the second time are done.
        mutating func answer(_ poll: UInt64) -> Directive {
            let answer = Directive.answerPoll(poll, notices: notices, tokenWillExpire: tokenWillExpire)
            answered = queued
            queued = []
            tokenWillExpire = false
            return answer
        }
    }

    /// A call token minted for a party, sent again in every notice until it is a quarter of its
    /// life old (minting costs more than the rest of a notice).
    public struct MintedToken: Equatable {
        /// The token.
        public var token: String
        /// When it was minted.
        public var issuedMs: Int64
    }

    /// A party's signaling coming or going, for its call's owner.
    public enum PartySignaling: Sendable, Equatable {
        /// Logged in again (within the call's grace).
        case returned
        /// Its session ended.
        case lost
    }

    /// A party's request at the call's owner.
    public enum PartyRequest: Sendable, Equatable {
        /// The callee accepts, naming the live room it hosts (empty: none).
        case accept(liveRoom: String)
        /// The caller cancels a call that rings.
        case cancel
        /// The callee rejects a call that rings.
        case reject(reason: String)
        /// A party hangs up.
        case hangup(reason: String)
        /// The party decoded the other's first frame.
        case firstFrame
        /// A fresh token for a party of a call that goes on.
        case token
        case signaling(PartySignaling)
    }

    /// How the callee's owner answered a ring.
    public enum RingOutcome: Sendable, Equatable {
        /// The call rings.
        case rung
        /// The call ended at once, busy.
        case busy
        /// Refused: nothing rings.
        case failed
        /// No answer (the ring or its answer lost, the owner slow or gone): the call may ring.
        case noAnswer
    }

    /// How a call's owner answered whether it holds a call.
    public enum CallCheck: Sendable, Equatable {
        /// It holds the call, which goes on.
        case holds
        /// It does not know the call, or it is over.
        case lost
        /// No answer: asked again on the next check.
        case noAnswer
    }

    /// How a party's owner notes a party of a call, as the call's owner asks it
    /// (``partyNote(uid:callID:)``, ``partyChecked(uid:callID:_:nowMs:)``).
    public enum PartyNote: Sendable, Equatable {
        /// In the call.
        case inCall
        /// In no call.
        case free
        /// In another call (its id).
        case inOtherCall(String)
        /// It cannot say: it does not own the party as it sees the members, is still catching up
        /// on its users' records, or did not answer. Asked again on the next check.
        case unsure
    }

    /// What a ring asks: the call as the caller's owner minted it.
    public struct Ring: Sendable, Equatable {
        /// The call id (`<callee>-<hex>`), minted by the caller's owner.
        public var callID: String
        /// The call's private channel (`call-<callee>-<hex>`).
        public var channel: String
        /// Who calls.
        public var caller: UInt32
        /// Who is called (owned by the node that rings).
        public var callee: UInt32
        /// Video or audio.
        public var type: CallType
        /// What the caller attached to the call.
        public var extensionInfo: [String: String]
        /// The calling timeout; nil for the settings'.
        public var timeoutMs: Int64?
        /// Whether connected waits for both sides' first remote frames.
        public var waitsForFirstFrame: Bool
        /// The live room the caller hosts, if any.
        public var liveRoom: String

        /// A ring of call `callID` on `channel`.
        public init(callID: String, channel: String, caller: UInt32, callee: UInt32, type: CallType,
                    extensionInfo: [String: String] = [:], timeoutMs: Int64? = nil, waitsForFirstFrame: Bool = true,
                    liveRoom: String = "") {
            self.callID = callID
            self.channel = channel
            self.caller = caller
            self.callee = callee
            self.type = type
            self.extensionInfo = extensionInfo
            self.timeoutMs = timeoutMs
            self.waitsForFirstFrame = waitsForFirstFrame
            self.liveRoom = liveRoom
        }
    }

    /// What a dial asks of the callee's owner.
    public struct DialPlan: Sendable, Equatable {
        /// The node owning the callee (and so the call): this one or another.
        public var owner: String
        /// The call id (`<callee>-<24 hex digits>`).
        public var callID: String
        /// The random part of the call channel's name (32 hex digits).
        public var channelSecret: String
    }

    /// What the shell must do.
    public enum Directive {
        /// Answer poll `poll` with `notices` (empty: the poll just ends).
        case answerPoll(UInt64, notices: [Notice], tokenWillExpire: Bool)
        /// Answer poll `poll` with "not logged in": its session ended.
        case refusePoll(UInt64, Presence.Ended)
        /// A session ended (for the log).
        case sessionEnded(Presence.Session, Presence.Ended)
        /// Carry out what the book decided (the node has noted its changes already): a notice goes
        /// to its party's owner, which may be this node (``deliver(_:to:callID:state:owner:)``).
        case call(CallDirective)
        /// Tell the owner of call `callID` that party `uid`'s signaling came or went.
        case signal(PartySignaling, uid: UInt32, callID: String, owner: String)
        /// Ask `owner` whether it holds call `entry.callID` of party `uid` (its recorded owner is
        /// gone, the call was noted long ago, or its ring went unanswered); answer with
        /// ``callChecked(uid:callID:owner:_:)``.
        case checkCall(uid: UInt32, InCall, owner: String)
        /// Ask `owner`, party `uid`'s owner, whether it notes `uid` in call `callID` (held here);
        /// answer with ``partyChecked(uid:callID:_:nowMs:)``.
        case checkParty(uid: UInt32, callID: String, owner: String)
        /// The call of `uid` is lost with its node: tell the party it failed (a notice built by
        /// the shell and handed to ``deliver(_:to:callID:state:owner:)``).
        case callLost(uid: UInt32, InCall)
        /// Send the batch of user records; answer with ``replicaBatchAnswered(_:held:newer:nowMs:)``.
        case replicate(VersionedStore<UserRecord>.Batch)
        /// Ask `member` for the records it holds of the keys this node holds too, the page after
        /// key `after` ("" for the first); answer with ``caughtUp(from:after:_:more:nowMs:)``.
        case catchUp(member: String, after: String)
        /// A call was taken over from its former owner (for the log).
        case adopted(Call)
        /// The notices of calls' ends for `uid` that no poll took before the user moved to another
        /// owner: send them to its owner of the moment, like a notice of a call owned elsewhere,
        /// so that an end told here is not lost with the move (notices of active states stay
        /// behind: the new owner has the user's call from its record).
        case handOver(uid: UInt32, notices: [Notice])
    }

    /// A reference to the call a user is in.
    public typealias InCall = UserRecord.InCall

    /// This node's id.
    public let selfID: String
    /// How long a call token lasts (seconds).
    public let callTokenSeconds: UInt32
    /// The sessions of the users owned here.
    public private(set) var presence: Presence
    /// The calls owned here.
    public private(set) var book: CallBook
    /// How often each user owned here may start calls.
    public private(set) var dials = DialRateLimit()
    /// The call each user owned here is in (or reserved for while dialling), with its owner.
    public private(set) var callOf: [UInt32: InCall] = [:]
    /// Since when each party's call has been noted here, by uid (to ask its owner now and then).
    private var notedSince: [UInt32: (callID: String, sinceMs: Int64)] = [:]
    /// Since when each active call owned here has been checked with its parties' owners, by id.
    private var partiesCheckedMs: [String: Int64] = [:]
    /// A party's call noted this long (longer than any dial's ring) is confirmed with its owner,
    /// and again each time as long; a call owned here this long is checked with its parties'
    /// owners, and again each time as long.
    public static var callRecheckMs: Int64 { 10_000 }
    /// Notices waiting for each session, and its parked poll.
    public private(set) var mailboxes: [String: Mailbox] = [:]
    /// Call tokens handed out, by call id and party; dropped within a second of the call's end.
    public private(set) var mintedTokens: [String: [UInt32: MintedToken]] = [:]
    /// The records of the users owned here or replicated here.
    public private(set) var records: VersionedStore<UserRecord>
    /// The last notice number delivered to each user owned here, for its latest calls: a notice
    /// delivered again (deliveries are retried) or overtaken by a later one changes nothing.
    public private(set) var deliveredNotices: [UInt32: [(callID: String, sequence: UInt64)]] = [:]
    /// The alive call-signal nodes as ``membersChanged(alive:gone:nowMs:)`` last saw them.
    public private(set) var membersSeen: [String]?
    private var lastCheckMs: Int64?
    private var random: Random
    /// The members to catch up from (they joined this node's members, or this node started), with
    /// the last key each sent so far.
    public private(set) var catchingUp: [String: String] = [:]
    /// The members with a catch-up ask in flight.
    private var catchUpAsked: Set<String> = []

    /// The most notices kept for a session between polls (the oldest go first).
    public static var mailboxLimit: Int { 256 }
    /// The most calls per user whose last delivered notice number is kept.
    public static var deliveredCallsLimit: Int { 8 }
    /// How long a deleted record's tombstone is kept.
    public static var tombstoneLifetimeMs: Int64 { 60_000 }
    /// The longest a call id or session id may be.
    public static var maxIDBytes: Int { 64 }

    /// A node `selfID` with no users, deciding with `settings` and `random`.
    public init(selfID: String, settings: CallSettings = CallSettings(), heartbeatTimeoutMs: Int64 = 10_000,
                callTokenSeconds: UInt32 = 120, random: Random) {
        self.selfID = selfID
        self.callTokenSeconds = callTokenSeconds
        self.random = random
        presence = Presence(heartbeatTimeoutMs: heartbeatTimeoutMs)
        book = CallBook(settings: settings)
        records = VersionedStore(selfID: selfID, role: .callsignal, precedence: UserRecord.precedence)
    }

    // MARK: - Who owns what

    /// The node owning `uid` (and the calls to it).
    public func owner(of uid: UInt32) -> String { records.replication.owner(of: UserRecord.key(of: uid)) }

    /// The callee a call id names (`<callee>-<hex>`), nil for anything else.
    public static func callee(ofCallID id: String) -> UInt32? {
        guard id.utf8.count <= maxIDBytes, let dash = id.firstIndex(of: "-"), let uid = UInt32(id[..<dash]), uid != 0 else {
            return nil
        }
        return uid
    }

    /// The uid a session id names (`<uid>-<secret>`), or the refusal.
    public static func uid(ofSession id: String) throws(Refusal) -> UInt32 {
        guard id.utf8.count <= maxIDBytes, let dash = id.firstIndex(of: "-"), let uid = UInt32(id[..<dash]), uid != 0 else {
            throw Refusal(.notLoggedIn, "'\(id.prefix(maxIDBytes))' is not a session id; log in and use the id it returns")
        }
        return uid
    }

    /// Online, in a call or offline, as this node (the owner) sees `uid`.
    public func presenceState(of uid: UInt32) -> (online: Bool, inCall: Bool) {
        (presence.isOnline(uid), callOf[uid] != nil)
    }

    // MARK: - Sessions

    /// `uid` logs in (its token checked by the shell, valid until `tokenExpiresAtMs`): returns
    /// the new session's id. A call it is in learns that it is back.
    public mutating func login(uid: UInt32, tokenExpiresAtMs: Int64, nowMs: Int64) throws(Refusal) -> (session: String, directives: [Directive]) {
        guard uid != 0 else { throw Refusal(.invalidArgument, "uid 0 cannot log in") }
        let id = "\(uid)-\(randomHex(16))"
        var directives = presenceChanged(presence.login(uid: uid, session: id, tokenExpiresAtMs: tokenExpiresAtMs, nowMs: nowMs))
        changed(uid)
        mailboxes[id] = Mailbox()
        if let current = callOf[uid] { directives.append(signal(.returned, uid: uid, callID: current.callID)) }
        return (id, directives)
    }

    /// The session `id`, heard from now, or the refusal.
    public mutating func session(_ id: String, nowMs: Int64) throws(Refusal) -> Presence.Session {
        guard let session = presence.session(id, nowMs: nowMs) else {
            throw Refusal(.notLoggedIn,
                          "no session \(id.prefix(12))…: never logged in, logged out, timed out or replaced by a newer login; log in again")
        }
        return session
    }

    /// The session logs out.
    public mutating func logout(_ id: String, nowMs: Int64) throws(Refusal) -> [Directive] {
        _ = try session(id, nowMs: nowMs)
        return presenceChanged(presence.logout(id))
    }

    /// The session renewed its login token (checked by the shell).
    public mutating func renew(_ id: String, tokenExpiresAtMs: Int64, nowMs: Int64) throws(Refusal) {
        let session = try session(id, nowMs: nowMs)
        presence.renew(id, tokenExpiresAtMs: tokenExpiresAtMs, nowMs: nowMs)
        changed(session.uid)
        mailboxes[id]?.tokenWillExpire = false
    }

    /// Poll `poll` of session `id`: answered at once when notices wait (or the token will
    /// expire, or the session was just taken over from another node, so the client learns where
    /// it is now), else parked for `waitMs`. A newer poll answers the parked one, empty. Each
    /// notice is carried by two answers (``Mailbox``): one that did not reach the client loses
    /// nothing.
    public mutating func poll(_ id: String, poll: UInt64, waitMs: Int64, nowMs: Int64) throws(Refusal) -> [Directive] {
        _ = try session(id, nowMs: nowMs)
        let firstHere = mailboxes[id] == nil
        var mailbox = mailboxes[id] ?? Mailbox()
        var directives: [Directive] = []
        // Parked, it found nothing waiting, and anything since would have answered it.
        if let parked = mailbox.parked { directives.append(.answerPoll(parked.poll, notices: [], tokenWillExpire: false)) }
        mailbox.parked = nil
        if !mailbox.waiting, waitMs > 0, !firstHere {
            mailbox.parked = (poll, nowMs + waitMs)
            mailboxes[id] = mailbox
            return directives
        }
        directives.append(mailbox.answer(poll))
        mailboxes[id] = mailbox
        return directives
    }

    /// A notice for `uid` (owned here) of call `callID` owned by `owner`, with the party's state
    /// in it (nil: not a state of an active call): keeps what `uid` is in up to date, queues the
    /// notice for its session and wakes its parked poll. With its `sequence`, a notice no newer
    /// than the last one delivered of the call is dropped: a retried or overtaken notice never
    /// takes a user back into a call that ended. A notice that the call is lost with its node
    /// (`lost`), decided by another node while this one notes the party in that call, is first
    /// confirmed with the call's owner: the deciding node's view of the members may have been a
    /// partition's, and a party told its call is lost takes that as final while the call goes on.
    public mutating func deliver(_ notice: Notice, to uid: UInt32, callID: String, state: CallState?,
                                 owner: String, sequence: UInt64? = nil, lost: Bool = false) -> [Directive] {
        if lost, let entry = callOf[uid], entry.callID == callID { return confirm(uid, entry) }
        if let sequence {
            var marks = deliveredNotices[uid, default: []]
            if let index = marks.firstIndex(where: { $0.callID == callID }) {
                guard sequence > marks[index].sequence else { return [] }
                marks[index].sequence = sequence
            } else {
                marks.append((callID, sequence))
                if marks.count > Self.deliveredCallsLimit { marks.removeFirst(marks.count - Self.deliveredCallsLimit) }
            }
            deliveredNotices[uid] = marks
        }
        changed(uid)
        let ends: Bool
        switch state {
        case .calling, .connecting, .connected:
            callOf[uid] = InCall(callID: callID, owner: owner)
            ends = false
        default:
            if callOf[uid]?.callID == callID { callOf[uid] = nil }
            ends = true
        }
        guard let id = presence.sessionOf[uid] else { return [] }
        var mailbox = mailboxes[id] ?? Mailbox()
        mailbox.queued.append((notice, ends))
        if mailbox.queued.count > Self.mailboxLimit { mailbox.queued.removeFirst(mailbox.queued.count - Self.mailboxLimit) }
        mailboxes[id] = mailbox
        return wake(id)
    }

    // MARK: - Dialling, at the caller's owner

    /// `caller` dials `callee`: the caller is reserved for the new call; ring it at the plan's
    /// owner and report the answer with ``ringAnswered(caller:callID:_:)``.
    public mutating func dial(_ callee: UInt32, caller: UInt32, nowMs: Int64) throws(Refusal) -> DialPlan {
        if let current = callOf[caller] {
            throw Refusal(.callerInCall, "uid \(caller) is in call \(current.callID); hang it up first")
        }
        guard callee != 0, callee != caller else {
            throw Refusal(.invalidArgument, "call another user: uid \(callee) cannot be called by uid \(caller)")
        }
        guard dials.admit(caller, nowMs: nowMs) else {
            let wait = max(0, (dials.nextAllowedMs(caller, nowMs: nowMs) ?? nowMs) - nowMs)
            throw Refusal(.callRateLimited,
                          "uid \(caller) started \(dials.limit) calls within \(dials.windowMs / 1000) s; call again in \(wait) ms")
        }
        let plan = DialPlan(owner: owner(of: callee), callID: "\(callee)-\(randomHex(12))", channelSecret: randomHex(16))
        callOf[caller] = InCall(callID: plan.callID, owner: plan.owner)
        changed(caller)
        return plan
    }

    /// The callee's owner answered the ring of `callID`: a refused or busy ring drops the
    /// caller's reservation (unless the caller moved on to another call meanwhile). A ring not
    /// answered may have rung (only its answer lost): the reservation stays, and the call's owner
    /// is asked at once whether it holds the call (answer with
    /// ``callChecked(uid:callID:owner:_:)``), so a call that rings never has a caller its owner
    /// counts as free, and one that never rang frees the caller.
    @discardableResult
    public mutating func ringAnswered(caller: UInt32, callID: String, _ outcome: RingOutcome) -> [Directive] {
        guard outcome != .rung, let entry = callOf[caller], entry.callID == callID else { return [] }
        if outcome == .noAnswer {
            return [.checkCall(uid: caller, entry, owner: Self.callee(ofCallID: callID).map(owner) ?? entry.owner)]
        }
        callOf[caller] = nil
        changed(caller)
        return []
    }

    // MARK: - At the call's owner

    /// `CALL_RING`: rings the callee (owned here), or ends the call busy.
    public mutating func ring(_ ring: Ring, nowMs: Int64) throws(Refusal) -> (call: Call, directives: [Directive]) {
        guard ring.caller != 0, ring.callee != 0, Self.callee(ofCallID: ring.callID) == ring.callee,
              ring.callID.hasPrefix("\(ring.callee)-"),
              ring.channel.utf8.count <= Self.maxIDBytes else {
            throw Refusal(.invalidArgument, "a ring names its caller, callee, call id and channel")
        }
        let made: (call: Call, directives: [CallDirective])
        do {
            made = try book.call(
                id: ring.callID, channel: ring.channel, from: ring.caller, to: ring.callee, type: ring.type,
                extensionInfo: ring.extensionInfo, timeoutMs: ring.timeoutMs, waitsForFirstFrame: ring.waitsForFirstFrame,
                callerLiveRoom: ring.liveRoom, calleeOnline: presence.isOnline(ring.callee),
                calleeInCallElsewhere: callOf[ring.callee]?.callID, nowMs: nowMs)
        } catch {
            throw Refusal(error)
        }
        return (made.call, booked(made.directives))
    }

    /// A party's request for call `callID` (owned here): the call as it is after it, if held.
    public mutating func act(_ request: PartyRequest, by uid: UInt32, callID id: String,
                             nowMs: Int64) throws(Refusal) -> (call: Call?, directives: [Directive]) {
        guard let callee = Self.callee(ofCallID: id) else { throw Refusal(.unknownCall, "'\(id.prefix(Self.maxIDBytes))' is not a call id") }
        var directives = adoptOnDemand(id, nowMs: nowMs)
        // Only the callee's owner may say a call is unknown: another node that does not hold it
        // may just not have taken it over yet, and "unknown" would free its parties for good.
        guard book.calls[id] != nil || owner(of: callee) == selfID else {
            throw Refusal(.notOwner, "call \(id) is held by uid \(callee)'s owner, \(owner(of: callee)) as node \(selfID) sees the members; ask again in a moment")
        }
        changed(callee)
        let decided: [CallDirective]
        do throws(CallRefusal) {
            switch request {
            case .accept(let room): decided = try book.accept(id, by: uid, liveRoom: room, nowMs: nowMs)
            case .cancel: decided = try book.cancel(id, by: uid, nowMs: nowMs)
            case .reject(let reason): decided = try book.reject(id, by: uid, reason: reason, nowMs: nowMs)
            case .hangup(let reason): decided = try book.hangup(id, by: uid, reason: reason, nowMs: nowMs)
            case .firstFrame: decided = try book.firstFrameDecoded(id, by: uid, nowMs: nowMs)
            case .token:
                guard let call = book.calls[id] else { throw CallRefusal(.unknownCall, "no call \(id)") }
                guard call.isParty(uid) else { throw CallRefusal(.notYourCall, "uid \(uid) is not a party of call \(id)") }
                guard call.isActive else { throw CallRefusal(.callEnded, "call \(id) is over; its channel is sealed") }
                decided = []
            case .signaling(.returned): decided = book.partyJoined(id, uid: uid, nowMs: nowMs)
            case .signaling(.lost): decided = book.partyLeft(id, uid: uid, nowMs: nowMs)
            }
        } catch {
            throw Refusal(error)
        }
        directives += booked(decided)
        return (book.calls[id], directives)
    }

    /// A party joined or left the channel of a call held here, as an edge saw it.
    public mutating func channelActivity(channel: String, uid: UInt32, joined: Bool, nowMs: Int64) -> [Directive] {
        guard let id = book.callOnChannel[channel] else { return [] }
        if let callee = Self.callee(ofCallID: id) { changed(callee) }
        return booked(joined ? book.partyJoined(id, uid: uid, nowMs: nowMs) : book.partyLeft(id, uid: uid, nowMs: nowMs))
    }

    // MARK: - Call tokens

    /// The token minted for `uid` in call `callID` while it is under a quarter of its life old.
    public func cachedToken(callID: String, uid: UInt32, nowMs: Int64) -> String? {
        guard let minted = mintedTokens[callID]?[uid], nowMs - minted.issuedMs < Int64(callTokenSeconds) * 250 else { return nil }
        return minted.token
    }

    /// Keeps a token just minted for `uid` in call `callID` (an active call held here).
    public mutating func tokenMinted(_ token: String, callID: String, uid: UInt32, nowMs: Int64) {
        guard book.calls[callID]?.isActive == true else { return }
        mintedTokens[callID, default: [:]][uid] = MintedToken(token: token, issuedMs: nowMs)
    }

    // MARK: - The clock

    /// What the clock ends: parked polls that waited long enough, silent sessions, calls past
    /// their timers; once a second the calls of gone nodes (`gone`: dead or departed members) are
    /// checked and old tombstones and ended calls' tokens forgotten.
    public mutating func tick(nowMs: Int64, gone: Set<String>) -> [Directive] {
        var directives: [Directive] = []
        for id in mailboxes.keys.sorted() {
            guard let parked = mailboxes[id]?.parked else { continue }
            // A parked poll keeps its session alive.
            _ = presence.session(id, nowMs: nowMs)
            if nowMs >= parked.untilMs {
                mailboxes[id]?.parked = nil
                directives.append(.answerPoll(parked.poll, notices: [], tokenWillExpire: false))
            }
        }
        directives += presenceChanged(presence.tick(nowMs: nowMs))
        directives += booked(book.tick(nowMs: nowMs))
        dials.purge(nowMs: nowMs)
        if let last = lastCheckMs, nowMs - last < 1_000 { return directives }
        lastCheckMs = nowMs
        directives += checkCallsOfLostNodes(gone: gone)
        directives += recheckCalls(nowMs: nowMs)
        directives += checkParties(nowMs: nowMs)
        _ = records.dropTombstones(olderThanMs: Self.tombstoneLifetimeMs, nowMs: nowMs)
        mintedTokens = mintedTokens.filter { book.calls[$0.key]?.isActive == true }
        directives += takeCatchUps()
        return directives
    }

    // MARK: - Replication

    /// Writes the changed records of the users owned here: a batch for each of their replicas.
    public mutating func flush() -> [Directive] {
        guard records.isFlushDue else { return [] }
        // The record follows from the sessions, the calls and the book, none of which a flush changes.
        let (presence, callOf, book) = (presence, callOf, book)
        return records.flush { key in
            UserRecord.uid(ofKey: key).flatMap { Self.record(of: $0, presence: presence, callOf: callOf, book: book) }
        }.batches.map(Directive.replicate)
    }

    /// A member answered a batch of records; `newer` are the records it kept over the batch's
    /// (this node is behind on those users: it restarted, or was cut off while another node wrote
    /// them). They are taken like a hand-over, ties included, so the next flush writes past them
    /// instead of being ignored by the replica for good.
    @discardableResult
    public mutating func replicaBatchAnswered(_ batch: VersionedStore<UserRecord>.Batch, held: Bool,
                                              newer: [ReplicatedEntry<UserRecord>] = [], nowMs: Int64 = 0) -> [Directive] {
        _ = records.batchAnswered(batch, held: held)
        numberAboveCopies(in: newer)
        var directives: [Directive] = []
        for entry in records.receiveKeptOver(newer.filter { records.replication.holds($0.key) }).persist {
            if let record = entry.value, records.replication.owns(entry.key) { directives += adopt(record, nowMs: nowMs) }
        }
        return directives
    }

    /// Records from a user's owner or a hand-over (checked for form by the shell): those of users
    /// this node owns now are taken over at once.
    public mutating func receive(_ entries: [ReplicatedEntry<UserRecord>], nowMs: Int64) -> [Directive] {
        numberAboveCopies(in: entries)
        var directives: [Directive] = []
        for entry in records.receive(entries).persist {
            if let record = entry.value, records.replication.owns(entry.key) { directives += adopt(record, nowMs: nowMs) }
        }
        return directives
    }

    /// A batch of records from another member (checked for form by the shell), taken like
    /// ``receive(_:nowMs:)``. Returns, besides, what to answer with: the records held here that
    /// the batch did not replace (``ReplicatedStore/keptOver(_:)``), so a writer that is behind
    /// (restarted with nothing and writing its users from version 1 again) learns what it missed
    /// rather than having its writes ignored.
    public mutating func replicaBatch(_ entries: [ReplicatedEntry<UserRecord>],
                                      nowMs: Int64) -> (newer: [ReplicatedEntry<UserRecord>], directives: [Directive]) {
        let directives = receive(entries, nowMs: nowMs)
        return (records.keptOver(entries), directives)
    }

    /// A catch-up ask from `member`: the page after key `after` of the records held here of keys
    /// `member` holds too (at most `limit`), and whether more follow.
    public func catchUpPage(for member: String, after: String, limit: Int) -> (entries: [ReplicatedEntry<UserRecord>], more: Bool) {
        let limit = max(1, limit)
        let keys = records.entries.keys.filter { $0 > after && records.replication.holders(of: $0).contains(member) }.sorted()
        return (keys.prefix(limit).compactMap { records.entries[$0] }, keys.count > limit)
    }

    /// `member` answered the catch-up ask of the page after `after` with `entries` (nil: no
    /// answer; asked again within a second), `more` when another page follows. What it holds of
    /// the keys this node holds is taken like a hand-over.
    public mutating func caughtUp(from member: String, after: String, _ entries: [ReplicatedEntry<UserRecord>]?,
                                  more: Bool, nowMs: Int64) -> [Directive] {
        guard let asked = catchingUp[member] else { return [] }
        catchUpAsked.remove(member)
        // The answer to an earlier ask (the member left and came back since): this one's goes out.
        guard asked == after else { return takeCatchUps() }
        // No answer: asked again on the clock.
        guard let entries else { return [] }
        let last = entries.map(\.key).max() ?? after
        if more, last > after { catchingUp[member] = last } else { catchingUp[member] = nil }
        return receive(entries.filter { records.replication.holds($0.key) }, nowMs: nowMs) + takeCatchUps()
    }

    /// The alive call-signal nodes are `alive` (`gone`: dead or departed members): records go to
    /// their new holders, users owned elsewhere now are given up (a parked poll answered empty, so
    /// the client's next goes to the new owner), users owned here now are taken over from their
    /// records, and the calls of parties held here whose owner died are checked.
    public mutating func membersChanged(alive: [String], gone: Set<String>, nowMs: Int64) -> [Directive] {
        // Most changes are other members' metadata: the call-signal nodes are the same.
        guard alive != membersSeen else { return [] }
        // A member that joined may hold newer records of this node's users than this node (it
        // restarted faster than the failure detector noticed, and the others, seeing no change,
        // hand it nothing): it asks each member it sees join for what they hold.
        for member in Set(alive).subtracting(membersSeen ?? []).subtracting([selfID]) { catchingUp[member] = "" }
        catchingUp = catchingUp.filter { alive.contains($0.key) }
        catchUpAsked.formIntersection(alive)
        membersSeen = alive
        var directives = flush()
        directives += records.membersChanged(to: alive).batches.map(Directive.replicate)
        var live = Set(presence.sessionOf.keys).union(callOf.keys)
        live.formUnion(book.activeCall.compactMap { uid, id in book.calls[id]?.callee == uid ? uid : nil })
        for uid in live.sorted() where !records.replication.owns(UserRecord.key(of: uid)) { directives += release(uid) }
        for key in records.entries.keys.sorted() where records.replication.owns(key) {
            if let record = records[key] { directives += adopt(record, nowMs: nowMs) }
        }
        directives += checkCallsOfLostNodes(gone: gone)
        directives += takeCatchUps()
        return directives
    }

    /// The catch-up asks due: one per member caught up from with none in flight.
    private mutating func takeCatchUps() -> [Directive] {
        let due = catchingUp.keys.sorted().filter { !catchUpAsked.contains($0) }
        catchUpAsked.formUnion(due)
        return due.map { .catchUp(member: $0, after: catchingUp[$0]!) }
    }

    /// The owner of party `uid`'s call `callID` answered whether it holds it.
    public mutating func callChecked(uid: UInt32, callID: String, owner: String, _ check: CallCheck) -> [Directive] {
        guard let entry = callOf[uid], entry.callID == callID else { return [] }
        changed(uid)
        switch check {
        case .holds: callOf[uid]?.owner = owner
        case .lost: return lose(uid, entry)
        case .noAnswer: break
        }
        return []
    }

    /// Whether party `uid` (owned here) is noted in call `callID`, for the call's owner that asks
    /// (``Directive/checkParty(uid:callID:owner:)``): a malformed ask (uid 0, no call id, an
    /// oversize one) is refused. A node that does not own `uid`, or is catching up on its users'
    /// records, is unsure: what it notes may not be the user's latest.
    public func partyNote(uid: UInt32, callID: String) throws(Refusal) -> PartyNote {
        guard uid != 0, Self.callee(ofCallID: callID) != nil else {
            throw Refusal(.invalidArgument,
                          "a party check names a uid other than 0 and a call id `<callee>-<hex>` of at most \(Self.maxIDBytes) bytes, not uid \(uid) and '\(callID.prefix(Self.maxIDBytes))'")
        }
        guard membersSeen != nil, catchingUp.isEmpty, records.replication.owns(UserRecord.key(of: uid)) else { return .unsure }
        switch callOf[uid]?.callID {
        case callID: return .inCall
        case nil: return .free
        case let other?: return .inOtherCall(other)
        }
    }

    /// Party `uid`'s owner answered how it notes `uid` in call `callID`. A call held active here
    /// whose party is free at its owner, or in another call there (a node cut off from the others
    /// took itself for the call's owner and freed the party, or a ring was checked before it
    /// arrived), ends for both parties: the party's owner decides whether its user may be rung or
    /// dial, and its user was told, or will be told, that the call is over. An answer about a call
    /// not held here, over, or of which `uid` is no party changes nothing.
    public mutating func partyChecked(uid: UInt32, callID: String, _ note: PartyNote, nowMs: Int64) -> [Directive] {
        guard let call = book.calls[callID], call.isActive, call.isParty(uid), owner(of: call.callee) == selfID else { return [] }
        let message: String
        switch note {
        case .inCall, .unsure: return []
        case .free: message = "uid \(uid)'s signaling node no longer has it in the call"
        case .inOtherCall(let other): message = "uid \(uid)'s signaling node has it in call \(other.prefix(Self.maxIDBytes))"
        }
        return booked(book.endForAbsentParty(callID, uid: uid, message: message, nowMs: nowMs))
    }

    // MARK: - Inside

    private mutating func changed(_ uid: UInt32) { records.markChanged(UserRecord.key(of: uid)) }

    /// What a node holds of `uid`, nil for nothing.
    private static func record(of uid: UInt32, presence: Presence, callOf: [UInt32: InCall], book: CallBook) -> UserRecord? {
        var record = UserRecord(uid: uid, session: presence.state(of: uid))
        record.inCall = callOf[uid]
        record.ownedCall = book.latestOwned[uid].flatMap { book.calls[$0] }
        return record.isEmpty ? nil : record
    }

    private mutating func wake(_ id: String) -> [Directive] {
        guard var mailbox = mailboxes[id], let parked = mailbox.parked else { return [] }
        mailbox.parked = nil
        let answer = mailbox.answer(parked.poll)
        mailboxes[id] = mailbox
        return [answer]
    }

    private mutating func presenceChanged(_ decided: [Presence.Directive]) -> [Directive] {
        var directives: [Directive] = []
        for directive in decided {
            switch directive {
            case .tokenWillExpire(let session):
                mailboxes[session.id]?.tokenWillExpire = true
                directives += wake(session.id)
            case .ended(let session, let why):
                changed(session.uid)
                if let parked = mailboxes.removeValue(forKey: session.id)?.parked { directives.append(.refusePoll(parked.poll, why)) }
                directives.append(.sessionEnded(session, why))
                // Signaling lost in a call: the other side is told, and the grace starts.
                if why != .replaced, let current = callOf[session.uid] {
                    directives.append(signal(.lost, uid: session.uid, callID: current.callID))
                }
            }
        }
        return directives
    }

    private func signal(_ signaling: PartySignaling, uid: UInt32, callID: String) -> Directive {
        .signal(signaling, uid: uid, callID: callID, owner: Self.callee(ofCallID: callID).map(owner) ?? selfID)
    }

    /// Notes the changes the book's directives make and passes them on.
    private mutating func booked(_ decided: [CallDirective]) -> [Directive] {
        for case .notify(let notice) in decided { changed(notice.call.callee) }
        return decided.map(Directive.call)
    }

    /// Takes over a call this node does not hold whose record it holds as the replica of a node
    /// that is no longer alive (the requester's view of the members may be ahead of this one's).
    private mutating func adoptOnDemand(_ id: String, nowMs: Int64) -> [Directive] {
        guard book.calls[id] == nil, let callee = Self.callee(ofCallID: id),
              let entry = records.entries[UserRecord.key(of: callee)], let record = entry.value,
              record.ownedCall?.id == id,
              entry.writer == selfID || !records.replication.ring.members.contains(entry.writer)
        else { return [] }
        return adopt(record, nowMs: nowMs)
    }

    /// Takes over a user from its record (this node owns it now): what is held here already wins.
    private mutating func adopt(_ record: UserRecord, nowMs: Int64) -> [Directive] {
        var directives: [Directive] = []
        if let session = record.session { presence.adopt(session, uid: record.uid, nowMs: nowMs) }
        if callOf[record.uid] == nil { callOf[record.uid] = record.inCall }
        if let call = record.ownedCall, !call.isActive {
            directives += booked(book.adoptEnd(call, nowMs: nowMs))
        } else if let call = record.ownedCall, book.adopt(call) {
            directives.append(.adopted(call))
            // The parties' nodes learn the call's new owner.
            let me = selfID
            for party in [call.caller, call.callee] where callOf[party]?.callID == call.id { callOf[party]?.owner = me }
        }
        changed(record.uid)
        return directives
    }

    /// The calls owned here that another node's records carry too (it held them on the other side
    /// of a partition) number their next notices above that node's, whichever record wins the
    /// merge: the parties may have taken that node's numbers.
    private mutating func numberAboveCopies(in entries: [ReplicatedEntry<UserRecord>]) {
        for entry in entries where records.replication.owns(entry.key) {
            guard let copy = entry.value?.ownedCall, book.numberAbove(copy) else { continue }
            changed(copy.callee)
        }
    }

    /// Gives up what this node held of `uid`, owned by another node now (which has its record).
    private mutating func release(_ uid: UInt32) -> [Directive] {
        var directives: [Directive] = []
        if let id = presence.sessionOf[uid], let mailbox = mailboxes.removeValue(forKey: id) {
            if let parked = mailbox.parked { directives.append(.answerPoll(parked.poll, notices: [], tokenWillExpire: false)) }
            // Only the ends: delivered at the new owner, an end frees the user only from the call
            // it ended, while an active state (a ring, a connect) would set the user's call there
            // over what its record says, and a stale one would hold it in a call that is over.
            // Those the last answer carried too: it may not have reached the client.
            let ends = (mailbox.answered + mailbox.queued).filter(\.ends).map(\.notice)
            if !ends.isEmpty { directives.append(.handOver(uid: uid, notices: ends)) }
        }
        presence.release(uid)
        callOf[uid] = nil
        deliveredNotices[uid] = nil
        if let id = book.latestOwned[uid] { book.release(id) }
        return directives
    }

    /// A party held here whose call's recorded owner is gone asks the call's owner now: a call it
    /// took over goes on; one it does not know (never replicated) is over for the party.
    private mutating func checkCallsOfLostNodes(gone: Set<String>) -> [Directive] {
        var directives: [Directive] = []
        for uid in callOf.keys.sorted() {
            guard let entry = callOf[uid], entry.owner != selfID, gone.contains(entry.owner) else { continue }
            guard let callee = Self.callee(ofCallID: entry.callID) else {
                directives += lose(uid, entry)
                continue
            }
            let owner = owner(of: callee)
            if owner == selfID {
                if book.calls[entry.callID]?.isActive == true { callOf[uid]?.owner = owner } else { directives += lose(uid, entry) }
            } else {
                directives.append(.checkCall(uid: uid, entry, owner: owner))
            }
        }
        return directives
    }

    /// Each party's call noted for ``callRecheckMs`` is confirmed with its owner (here: the
    /// book), so a call that ended or was lost where this node could not hear of it (a partition
    /// that healed, an owner restarted before anyone noticed) does not hold its party for good.
    private mutating func recheckCalls(nowMs: Int64) -> [Directive] {
        var directives: [Directive] = []
        notedSince = notedSince.filter { callOf[$0.key]?.callID == $0.value.callID }
        for uid in callOf.keys.sorted() {
            guard let entry = callOf[uid] else { continue }
            guard let since = notedSince[uid]?.sinceMs else {
                notedSince[uid] = (entry.callID, nowMs)
                continue
            }
            guard nowMs - since >= Self.callRecheckMs else { continue }
            notedSince[uid] = (entry.callID, nowMs)
            guard Self.callee(ofCallID: entry.callID) != nil else { continue }
            directives += confirm(uid, entry)
        }
        return directives
    }

    /// Each active call owned here for ``callRecheckMs`` is checked with its parties' owners (here:
    /// ``partyNote(uid:callID:)``), and again each time as long: a party its owner freed while the
    /// call went on (the owner cut off from this node for a while) would otherwise be rung into a
    /// second call, or dial one, while this one holds it. A call is first checked a while after
    /// it is seen here, so a ring's notices and records reach the parties' owners first.
    private mutating func checkParties(nowMs: Int64) -> [Directive] {
        var directives: [Directive] = []
        partiesCheckedMs = partiesCheckedMs.filter { book.calls[$0.key]?.isActive == true }
        for (id, call) in book.calls.sorted(by: { $0.key < $1.key }) where call.isActive && owner(of: call.callee) == selfID {
            guard let since = partiesCheckedMs[id] else {
                partiesCheckedMs[id] = nowMs
                continue
            }
            guard nowMs - since >= Self.callRecheckMs else { continue }
            partiesCheckedMs[id] = nowMs
            for party in [call.caller, call.callee] {
                let owner = owner(of: party)
                guard owner != selfID else {
                    let note = (try? partyNote(uid: party, callID: id)) ?? .unsure
                    directives += partyChecked(uid: party, callID: id, note, nowMs: nowMs)
                    continue
                }
                directives.append(.checkParty(uid: party, callID: id, owner: owner))
            }
        }
        return directives
    }

    /// Asks the owner of party `uid`'s call `entry` whether it holds it (here: the book).
    private mutating func confirm(_ uid: UInt32, _ entry: InCall) -> [Directive] {
        guard let callee = Self.callee(ofCallID: entry.callID) else { return lose(uid, entry) }
        let owner = owner(of: callee)
        guard owner == selfID else { return [.checkCall(uid: uid, entry, owner: owner)] }
        if book.calls[entry.callID]?.isActive == true {
            callOf[uid]?.owner = owner
            return []
        }
        return lose(uid, entry)
    }

    private mutating func lose(_ uid: UInt32, _ entry: InCall) -> [Directive] {
        callOf[uid] = nil
        changed(uid)
        return [.callLost(uid: uid, entry)]
    }

    /// `bytes` random bytes as lowercase hex digits.
    /// A token's salt (1 … 99 999 999, as the reference builders draw it) from the node's random
    /// source, so a minted token is the same in every run of a seeded simulation.
    public mutating func tokenSalt() -> UInt32 {
        UInt32.random(in: 1...99_999_999, using: &random)
    }

    private mutating func randomHex(_ bytes: Int) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            let byte = Int(UInt8.random(in: 0...255, using: &random))
            text.append(digits[byte >> 4])
            text.append(digits[byte & 15])
        }
        return text
    }
}
