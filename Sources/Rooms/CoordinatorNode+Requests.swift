// Pure: no I/O, no clock, no randomness of its own.
import ReplicatedOwnership
import ShowroomWire
import SwiftProtobuf

/// Where a room request goes, as this coordinator sees the members
/// (``CoordinatorNode/route(_:roomID:forwarded:endpoint:)``).
public enum RoomRequestRoute: Sendable, Equatable {
    /// Served here once any catch-up of the room is over: this coordinator owns the room, or the
    /// request was forwarded to it (then only a read, which the room's replica answers).
    case serve
    /// Passed to the room's owner `owner`, at its cluster endpoint `endpoint`; its answer is relayed.
    case forward(owner: String, endpoint: String)
    /// Served here at once: the owner's endpoint is not known.
    case serveWithoutOwner
    /// Refused at once.
    case refuse(ShowroomError)
}

/// The checks of what a room request carries that need the app's secrets, which the shell holds
/// (a fake in tests): throwing is the refusal.
public struct RoomRequestChecks {
    /// Checks an admin signature for `action` on `target` (a room id).
    public var admin: (_ signature: RoomAdminSignature, _ action: String, _ target: String) throws(ShowroomError) -> Void
    /// Checks that `token` is `uid`'s token for `channel` (a PK or co-host request's actor).
    public var member: (_ token: String, _ uid: UInt32, _ channel: String) throws(ShowroomError) -> Void

    /// Checks made by `admin` and `member`.
    public init(admin: @escaping (RoomAdminSignature, String, String) throws(ShowroomError) -> Void,
                member: @escaping (String, UInt32, String) throws(ShowroomError) -> Void) {
        self.admin = admin
        self.member = member
    }
}

/// A room request served here: the plan that carries it out (the changes to write, the peer
/// updates to send, the question for another room's owner) and what it is answered once the plan
/// is carried out (``CoordinatorNode/answer(_:after:)``).
public struct RoomRequestServed: Sendable {
    /// What to carry out; nothing for a read.
    public var plan: InteractionPlan
    /// The answer, once `plan` is carried out.
    public var answer: RoomRequestAnswer

    /// `answer` once `plan` is carried out.
    public init(plan: InteractionPlan = InteractionPlan(), answer: RoomRequestAnswer) {
        self.plan = plan
        self.answer = answer
    }
}

/// What a room request is answered once its plan is carried out.
public enum RoomRequestAnswer: Sendable {
    /// This answer, whatever the plan came to.
    case ready(any SwiftProtobuf.Message)
    /// A leave's: the room as held once the writes are done (a co-host's stepping down changed it
    /// too), `written` when it is gone.
    case left(roomID: String, written: RoomRoom)
    /// A PK or co-host request's (``CoordinatorNode/interactionAnswer(roomID:made:)``), or the
    /// refusal its flow came to.
    case interaction(roomID: String, made: RoomRoomPendingRequest?)
}

extension CoordinatorNode {
    /// The PK and co-host request kinds clients send.
    public static let interactionKinds: [WireMessageKind] = [
        .roomPkInvite, .roomPkAnswer, .roomPkStop, .roomPkMatch,
        .roomCohostApply, .roomCohostInvite, .roomCohostAnswer, .roomCohostStop,
    ]

    /// The kinds answered from a room's replica when its owner does not answer.
    static func isRead(_ kind: WireMessageKind) -> Bool { kind == .roomGet || kind == .roomChatHistory }

    /// The room a room request is about. A create without a room id is given a new one here,
    /// written into `request`, so that it is routed (and created) under that id.
    public static func roomID(of request: inout WireEnvelope,
                              using generator: inout some RandomNumberGenerator) throws(ShowroomError) -> String {
        switch request.kind {
        case .roomCreate:
            var body = try request.decodeBody(RoomCreateRoomRequest.self)
            if body.roomID.isEmpty {
                body.roomID = RoomRegistry.newRoomID(using: &generator)
                do {
                    request.body = try body.serializedBytes()
                } catch {
                    throw .internal("cannot re-encode a create request: \(error)")
                }
            }
            return body.roomID
        case .roomGet: return try request.decodeBody(RoomGetRoomRequest.self).roomID
        case .roomJoin: return try request.decodeBody(RoomJoinRoomRequest.self).roomID
        case .roomLeave: return try request.decodeBody(RoomLeaveRoomRequest.self).roomID
        case .roomClose: return try request.decodeBody(RoomCloseRoomRequest.self).roomID
        case .roomUpdate: return try request.decodeBody(RoomUpdateRoomRequest.self).roomID
        case .roomChatSend: return try request.decodeBody(RoomSendChatRequest.self).roomID
        case .roomChatHistory: return try request.decodeBody(RoomChatHistoryRequest.self).roomID
        case .roomInteraction: return try request.decodeBody(RoomSetInteractionRequest.self).roomID
        case .roomPeerUpdate: return try request.decodeBody(RoomPeerUpdateRequest.self).roomID
        default:
            func roomID<Body: RoomActorRequest>(_: Body.Type) throws(ShowroomError) -> String { try request.decodeBody(Body.self).roomID }
            return try roomID(actorRequestType(of: request.kind))
        }
    }

    /// The body type of a PK or co-host request kind.
    static func actorRequestType(of kind: WireMessageKind) throws(ShowroomError) -> any RoomActorRequest.Type {
        switch kind {
        case .roomPkInvite: RoomPkInviteRequest.self
        case .roomPkAnswer: RoomPkAnswerRequest.self
        case .roomPkStop: RoomPkStopRequest.self
        case .roomPkMatch: RoomPkMatchRequest.self
        case .roomCohostApply: RoomCoHostApplyRequest.self
        case .roomCohostInvite: RoomCoHostInviteRequest.self
        case .roomCohostAnswer: RoomCoHostAnswerRequest.self
        case .roomCohostStop: RoomCoHostStopRequest.self
        default: throw .unknownKind("\(kind) is not a PK or co-host request")
        }
    }

    /// Where a request of `kind` about room `roomID` goes. A write forwarded here by a coordinator
    /// that takes this one for the owner, while this one does not, is refused: the two views of
    /// the members differ for a moment, and a write made by a coordinator that does not take
    /// itself for the owner could be acknowledged and then lost. `endpoint`: a member's cluster
    /// endpoint, if known.
    public func route(_ kind: WireMessageKind, roomID: String, forwarded: Bool,
                      endpoint: (String) -> String?) -> RoomRequestRoute {
        let owner = ownership.owner(of: roomID)
        let selfID = takeOver.selfID
        if forwarded, owner != selfID, !Self.isRead(kind) {
            return .refuse(.unavailable(
                "coordinator \(selfID) takes \(owner) for the owner of room \(roomID); the coordinators are settling, retry in a moment"))
        }
        if forwarded || owner == selfID { return .serve }
        guard let address = endpoint(owner) else { return .serveWithoutOwner }
        return .forward(owner: owner, endpoint: address)
    }

    /// What a request of `kind` about room `roomID` forwarded to its owner `owner` comes to when
    /// the owner did not answer (`error`): nil for a read, which the replica here answers; the
    /// refusal of a write, which waits for the membership to settle.
    public static func ownerDidNotAnswer(_ kind: WireMessageKind, roomID: String, owner: String,
                                         error: ShowroomError) -> ShowroomError? {
        guard !isRead(kind) else { return nil }
        return .unavailable("the coordinator owning room \(roomID) (\(owner)) did not answer (\(error.message)); retry in a moment")
    }

    /// The refusal of a request of room `roomID` that may not be served here now: held for a
    /// catch-up that took too long, or while this coordinator sees less than half of the cluster.
    public func holdRefusal(of roomID: String, seesMostOfTheCluster: Bool) -> ShowroomError {
        let why = seesMostOfTheCluster ? "is taking over room \(roomID) from the others"
            : "sees less than half of the cluster (a network partition?) and writes nothing until it sees more"
        return .unavailable("coordinator \(takeOver.selfID) \(why); retry in a moment")
    }

    /// The first write of room `roomID` since this coordinator took it over raises the room's
    /// version into the new term (``TakeOver/beginsTerm(_:of:)``): the changed room to write
    /// first, or nil when no term begins.
    public mutating func beginRoomTerm(of roomID: String) -> RoomChange? {
        guard takeOver.beginsTerm(.roomVersion, of: roomID),
              let room = records.registry.raiseVersion(of: roomID, termMs: takeOver.termMs) else { return nil }
        takeOver.began(.roomVersion, of: roomID)
        return RoomChange(room: room)
    }

    /// Serves a room request, a PK or co-host request, or a peer update at this coordinator
    /// (its room's owner, or a replica for a read): what to carry out and the answer after.
    /// Throws the refusal of a request that changes nothing.
    public mutating func serve(_ request: WireEnvelope, nowMs: Int64, using generator: inout some RandomNumberGenerator,
                               checks: RoomRequestChecks) throws(ShowroomError) -> RoomRequestServed {
        switch request.kind {
        case .roomGet:
            var answer = RoomGetRoomResponse()
            answer.room = try records.registry.get(try request.decodeBody(RoomGetRoomRequest.self))
            return RoomRequestServed(answer: .ready(answer))
        case .roomChatHistory:
            return RoomRequestServed(answer: .ready(try records.registry.history(try request.decodeBody(RoomChatHistoryRequest.self))))
        case .roomCreate:
            let change = try records.registry.create(try request.decodeBody(RoomCreateRoomRequest.self), nowMs: nowMs, using: &generator)
            return .writing(change, answer: RoomCreateRoomResponse.with { $0.room = change.room })
        case .roomJoin:
            let change = try records.registry.join(try request.decodeBody(RoomJoinRoomRequest.self), nowMs: nowMs)
            return .writing(change, answer: RoomJoinRoomResponse.with { $0.room = change.room })
        case .roomLeave:
            let body = try request.decodeBody(RoomLeaveRoomRequest.self)
            let change = try records.registry.leave(body, nowMs: nowMs)
            // A co-host leaving the room steps down; its open requests go.
            var plan = InteractionPlan(records.registry.coHostLeft(roomID: body.roomID, uid: body.uid, nowMs: nowMs), roomID: body.roomID)
            plan.changes.insert(change, at: 0)
            return RoomRequestServed(plan: plan, answer: .left(roomID: body.roomID, written: change.room))
        case .roomClose:
            let body = try request.decodeBody(RoomCloseRoomRequest.self)
            if body.hasAdmin { try checks.admin(body.admin, "close-room", body.roomID) }
            let change = try records.registry.close(body, byAdmin: body.hasAdmin, nowMs: nowMs)
            var served = RoomRequestServed.writing(change, answer: RoomCloseRoomResponse.with { $0.room = change.room })
            // Its PK ends at the peer, its invitations are withdrawn there.
            served.plan.sends = records.registry.takePeerUpdates().map(InteractionPlan.PeerSend.deliver)
            return served
        case .roomUpdate:
            let body = try request.decodeBody(RoomUpdateRoomRequest.self)
            if body.hasAdmin { try checks.admin(body.admin, "update-room", body.roomID) }
            let change = try records.registry.update(body, byAdmin: body.hasAdmin, nowMs: nowMs)
            return .writing(change, answer: RoomUpdateRoomResponse.with { $0.room = change.room })
        case .roomChatSend:
            let change = try records.registry.sendChat(try request.decodeBody(RoomSendChatRequest.self), nowMs: nowMs)
            var answer = RoomSendChatResponse()
            if let message = change.message { answer.message = message }
            return .writing(change, answer: answer)
        case .roomInteraction:
            let body = try request.decodeBody(RoomSetInteractionRequest.self)
            guard let change = try records.registry.setInteraction(body, nowMs: nowMs) else {
                // Nothing changed (a repeat, or a late clear of another call).
                return RoomRequestServed(answer: .ready(RoomSetInteractionResponse.with {
                    $0.room = records.registry.room(body.roomID) ?? RoomRoom()
                }))
            }
            return .writing(change, answer: RoomSetInteractionResponse.with { $0.room = change.room })
        case .roomPeerUpdate:
            // Answered once the change is written, whatever the flow it starts comes to.
            let (plan, answer) = try peerUpdate(try request.decodeBody(RoomPeerUpdateRequest.self), nowMs: nowMs)
            return RoomRequestServed(plan: plan, answer: .ready(answer))
        case .roomPkInvite: return try act(request, RoomPkInviteRequest.self, checks) { try $0.pkInvite($1, nowMs: nowMs, using: &generator) }
        case .roomPkAnswer: return try act(request, RoomPkAnswerRequest.self, checks) { try $0.pkAnswer($1, nowMs: nowMs) }
        case .roomPkStop: return try act(request, RoomPkStopRequest.self, checks) { try $0.pkStop($1, nowMs: nowMs) }
        case .roomPkMatch: return try act(request, RoomPkMatchRequest.self, checks) { try $0.pkMatch($1, nowMs: nowMs) }
        case .roomCohostApply:
            return try act(request, RoomCoHostApplyRequest.self, checks) { try $0.coHostApply($1, nowMs: nowMs, using: &generator) }
        case .roomCohostInvite:
            return try act(request, RoomCoHostInviteRequest.self, checks) { try $0.coHostInvite($1, nowMs: nowMs, using: &generator) }
        case .roomCohostAnswer:
            return try act(request, RoomCoHostAnswerRequest.self, checks) { try $0.coHostAnswer($1, nowMs: nowMs, using: &generator) }
        case .roomCohostStop: return try act(request, RoomCoHostStopRequest.self, checks) { try $0.coHostStop($1, nowMs: nowMs) }
        default:
            throw .unknownKind("\(request.kind) is not a PK or co-host request")
        }
    }

    /// A PK or co-host request: the body decoded, the actor's token checked (nobody acts for
    /// another user), and the step taken (``interact(in:_:)``).
    private mutating func act<Body: RoomActorRequest>(
        _ request: WireEnvelope, _: Body.Type, _ checks: RoomRequestChecks,
        _ step: (inout RoomRegistry, Body) throws -> InteractionOutcome
    ) throws(ShowroomError) -> RoomRequestServed {
        let body = try request.decodeBody(Body.self)
        guard body.uid != 0 else { throw .invalidArgument("uid is 0; act with the user's uid (1 – 4294967295)") }
        // An unknown room is refused by the registry with its own error.
        if let channel = records.registry.room(body.roomID)?.channel { try checks.member(body.token, body.uid, channel) }
        let plan = interact(in: body.roomID) { registry throws(ShowroomError) in
            do {
                return try step(&registry, body)
            } catch {
                throw error as? ShowroomError ?? .internal("\(request.kind) failed: \(error)")
            }
        }
        return RoomRequestServed(plan: plan, answer: .interaction(roomID: body.roomID, made: plan.request))
    }

    /// The answer to a served request once its plan is carried out, `outcome` being what the plan
    /// came to (a PK or co-host flow may be refused on its way).
    public func answer(_ answer: RoomRequestAnswer,
                       after outcome: Result<Void, ShowroomError>) -> Result<any SwiftProtobuf.Message, ShowroomError> {
        switch answer {
        case .ready(let message):
            return .success(message)
        case .left(let roomID, let written):
            return .success(RoomLeaveRoomResponse.with { $0.room = records.registry.room(roomID) ?? written })
        case .interaction(let roomID, let made):
            return outcome.map { interactionAnswer(roomID: roomID, made: made) }
        }
    }
}

extension RoomRequestServed {
    /// A write of `change`, answered `answer` once written.
    static func writing(_ change: RoomChange, answer: some SwiftProtobuf.Message) -> RoomRequestServed {
        var plan = InteractionPlan()
        plan.changes = [change]
        return RoomRequestServed(plan: plan, answer: .ready(answer))
    }
}

extension CoordinatorNode {
    /// The owner coordinator of `channel` to pass a request about it to, with its cluster
    /// endpoint; nil when this coordinator serves it: it owns the channel, the request was passed
    /// on already (it is passed on once), or the owner's endpoint is not known. `endpoint`: a
    /// member's cluster endpoint, if known.
    public func channelOwner(toAsk channel: String, forwarded: Bool,
                             endpoint: (String) -> String?) -> (owner: String, endpoint: String)? {
        let owner = ownership.owner(of: channel)
        guard !forwarded, owner != takeOver.selfID, let address = endpoint(owner) else { return nil }
        return (owner, address)
    }
}
