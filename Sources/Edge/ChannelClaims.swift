import ShowroomWire

/// What ``ChannelClaims`` asks the edge's shell to do.
public enum ClaimDirective: Sendable, Equatable {
    /// Ask the channel's owner coordinator whether this edge may host `channel` (`CHANNEL_CLAIM`);
    /// its answer goes to ``ChannelClaims/answered(_:_:drain:relays:)``.
    case claim(channel: String)
    /// Hand the join to the plane: the channel may be hosted here.
    case admit(ChannelClaims.HeldJoin)
    /// Refuse the join (``ChannelClaims/HeldJoin/refusal(_:)``).
    case refuse(ChannelClaims.HeldJoin, ShowroomError)
}

/// The joins an edge holds while it asks the channel's owner coordinator whether it may host the
/// channel (`CHANNEL_CLAIM`), as a pure state machine on the edge's clock: one claim per channel
/// however many joins wait for it, each join held at most ``timeout``, at most ``maxHeldJoins``
/// held in all. The shell sends the claims and carries out what the answers release.
///
/// Why the edge asks at all: a channel joined directly on an edge (not through `CHANNEL_PLACE`)
/// must not be hosted by two edges at once, or its users never meet.
public struct ChannelClaims: Sendable {
    /// A join that waits for its channel's claim.
    public struct HeldJoin: Sendable, Equatable {
        /// The joining session.
        public var session: SessionID
        /// The join's request id (0: one-way, refused with an error event).
        public var requestID: UInt64
        /// The join.
        public var request: EdgeRequest
        /// The channel joined.
        public var channel: String

        /// A join of `channel` by `session`.
        public init(session: SessionID, requestID: UInt64, request: EdgeRequest, channel: String) {
            self.session = session
            self.requestID = requestID
            self.request = request
            self.channel = channel
        }

        /// What the joining session is told when the join is refused: a failed reply, or an
        /// error event for a join sent without a request id.
        public func refusal(_ error: ShowroomError) -> EdgeDirective {
            if requestID != 0 { return .reply(EdgeReply(requestID: requestID, kind: .join, result: .failure(error)), to: session) }
            return .send(.error(error, channel: channel, track: nil), to: session)
        }
    }

    /// What the edge knows of a join as it arrives (see ``hold(_:from:requestID:_:now:tokenValid:)``).
    public struct Arrival: Sendable, Equatable {
        /// Whether the edge has a link to the coordinators: a standalone edge asks nobody.
        public var linked: Bool
        /// Whether the channel is hosted here already, by the plane or as a relay.
        public var hosted: Bool
        /// Whether a broadcaster joins a relayed channel: the coordinator may have moved the
        /// channel here (its origin died), so it is asked even though the channel is hosted.
        public var broadcasterInRelay: Bool
        /// Whether the joining session is a relay link's.
        public var fromRelayLink: Bool
        /// Whether the joining session is open (the plane refuses the join otherwise).
        public var sessionOpen: Bool

        /// The facts of one join.
        public init(linked: Bool, hosted: Bool, broadcasterInRelay: Bool = false, fromRelayLink: Bool = false, sessionOpen: Bool = true) {
            self.linked = linked
            self.hosted = hosted
            self.broadcasterInRelay = broadcasterInRelay
            self.fromRelayLink = fromRelayLink
            self.sessionOpen = sessionOpen
        }
    }

    /// How long a join waits for a claim's answer.
    public let timeout: Duration
    /// How many joins are held at most over all channels.
    public let maxHeldJoins: Int
    private var held: [String: (since: Duration, joins: [HeldJoin])] = [:]
    /// How many joins are held now.
    public private(set) var heldJoins = 0

    /// No claim under way.
    public init(timeout: Duration = .seconds(5), maxHeldJoins: Int = 10_000) {
        self.timeout = timeout
        self.maxHeldJoins = maxHeldJoins
    }

    /// Whether a claim for `channel` is under way.
    public func isPending(_ channel: String) -> Bool { held[channel] != nil }

    /// Takes in a request as it arrives. A join of a channel this edge does not host is held
    /// while the channel's owner coordinator is asked (the first join of the channel sends the
    /// claim; later ones wait for its answer), or refused when too many are held.
    ///
    /// - Returns: nil if the request is not held: hand it to the plane. That is anything but a
    ///   join; a join on an edge with no link to the coordinators; with no claim under way, a
    ///   join of a channel hosted here, a relay link's own join (the coordinator placed the
    ///   origin's channel already), or one the plane refuses anyway (no session, a bad token:
    ///   `tokenValid` is asked last).
    public mutating func hold(
        _ request: EdgeRequest, from session: SessionID, requestID: UInt64, _ arrival: Arrival, now: Duration,
        tokenValid: (_ token: String, _ channel: String, _ uid: UInt32) -> Bool
    ) -> [ClaimDirective]? {
        guard case .join(let channel, let uid, let token, _, _) = request, arrival.linked else { return nil }
        if held[channel] == nil {
            guard arrival.broadcasterInRelay || !arrival.hosted,
                  !(arrival.fromRelayLink && RelayLinkIdentity.isLinkUID(uid)),
                  arrival.sessionOpen,
                  tokenValid(token, channel, uid)
            else { return nil }
        }
        let join = HeldJoin(session: session, requestID: requestID, request: request, channel: channel)
        guard heldJoins < maxHeldJoins else {
            return [.refuse(join, .unavailable("too many joins wait for the room-coordinators' word on their channels; join again in a moment"))]
        }
        heldJoins += 1
        if held[channel] != nil {
            held[channel]!.joins.append(join)
            return []
        }
        held[channel] = (now, [join])
        return [.claim(channel: channel)]
    }

    /// What becomes of a request as it arrives (``arrive(_:from:requestID:linked:plane:relays:drain:now:tokenValid:)``).
    public enum Admission: Sendable, Equatable {
        /// Hand it to the plane.
        case handOver
        /// Refuse it with this error (a join while draining, broadcasting in a relayed channel, a
        /// relay link joining a channel relayed here).
        case refuse(ShowroomError)
        /// It is held for its channel's claim; carry out these directives.
        case held([ClaimDirective])
    }

    /// Takes in a request as it arrives, before the plane sees it: a draining edge refuses joins
    /// (``EdgeDrain/refusal(of:)``); a request the relays refuse (``RelayBook/refusal(of:fromRelayLink:)``)
    /// is refused, unless it is a broadcaster's join, which asks the coordinator (it may have
    /// moved the channel here, its origin gone) and is refused only if it is not held; any other
    /// join may be held for its claim (``hold(_:from:requestID:_:now:tokenValid:)``), the facts of
    /// its arrival read from `plane` and `relays`; `linked`: whether the edge has a link to the
    /// coordinators.
    public mutating func arrive<Frame, Waiter>(
        _ request: EdgeRequest, from session: SessionID, requestID: UInt64, linked: Bool, plane: ChannelPlane<Frame>,
        relays: RelayBook, drain: EdgeDrain<Waiter>, now: Duration, tokenValid: (_ token: String, _ channel: String, _ uid: UInt32) -> Bool
    ) -> Admission {
        if let error = drain.refusal(of: request) { return .refuse(error) }
        let relayRefusal = relays.isEmpty ? nil : relays.refusal(of: request, fromRelayLink: plane.isRelayLink(session))
        if let relayRefusal, !request.isBroadcasterJoin { return .refuse(relayRefusal) }
        guard case .join(let channel, _, _, _, _) = request else { return .handOver }
        let arrival = Arrival(
            linked: linked, hosted: plane.hosts(channel: channel) || relays.isRelayed(channel), broadcasterInRelay: relayRefusal != nil,
            fromRelayLink: plane.isRelayLink(session), sessionOpen: plane.session(session) != nil)
        if let directives = hold(request, from: session, requestID: requestID, arrival, now: now, tokenValid: tokenValid) {
            return .held(directives)
        }
        return relayRefusal.map(Admission.refuse) ?? .handOver
    }

    /// The owner coordinator answered the claim for `channel`: the joins held for it, oldest
    /// first, are admitted, or refused with the answer's error (`CHANNEL_ELSEWHERE` names the
    /// edge to join). A draining edge (`drain`) refuses them all; a channel the answer made a
    /// relay (`relays`, told of the answer first) refuses its broadcasters, naming the origin.
    public mutating func answered<Waiter>(
        _ channel: String, _ outcome: ClaimOutcome, drain: EdgeDrain<Waiter>, relays: RelayBook
    ) -> [ClaimDirective] {
        resolve(channel).map { join in
            switch outcome {
            case .admit, .placed, .relay:
                let refusal = drain.refusal(of: join.request) ?? relays.refusal(of: join.request)
                return refusal.map { .refuse(join, $0) } ?? .admit(join)
            case .refuse(let error):
                return .refuse(join, error)
            }
        }
    }

    /// Refuses the joins whose claim went unanswered for ``timeout``: the channel may be placed
    /// elsewhere, so admitting them could split it.
    public mutating func expire(now: Duration) -> [ClaimDirective] {
        let late = held.filter { now - $0.value.since >= timeout }.keys.sorted()
        return late.flatMap { channel in
            resolve(channel).map { join in
                .refuse(join, .unavailable(
                    "the room-coordinators did not say within \(timeout) whether channel '\(channel)' may be hosted here; join again in a moment"))
            }
        }
    }

    /// The joins held for `channel`'s claim, taken out.
    private mutating func resolve(_ channel: String) -> [HeldJoin] {
        guard let entry = held.removeValue(forKey: channel) else { return [] }
        heldJoins -= entry.joins.count
        return entry.joins
    }
}

extension EdgeRequest {
    /// Whether this is a join as broadcaster.
    fileprivate var isBroadcasterJoin: Bool {
        if case .join(_, _, _, .broadcaster, _) = self { true } else { false }
    }
}
