import Edge
import ShowroomWire

/// The joins an edge holds while it asks the channel's owner coordinator whether it may host the
/// channel (`CHANNEL_CLAIM`): one claim per channel however many joins wait for it, each join held
/// at most ``timeout``, at most ``maxHeldJoins`` held in all. A pure state machine on the edge's
/// clock; the shell sends the claims and carries out what the answers release.
///
/// Why the edge asks at all: a channel joined directly on an edge (not through `CHANNEL_PLACE`)
/// must not be hosted by two edges at once, or its users never meet.
struct ChannelClaims {
    /// A join that waits for its channel's claim.
    struct HeldJoin: Equatable {
        var session: SessionID
        var requestID: UInt64
        var request: EdgeRequest
        var channel: String
    }

    /// How a join was taken in.
    enum Hold: Equatable {
        /// The first join for the channel: send a claim.
        case claim
        /// A claim for the channel is under way already: the join waits for its answer.
        case waiting
        /// Too many joins are held: refuse this one.
        case full
    }

    /// How long a join waits for a claim's answer.
    let timeout: Duration
    /// How many joins are held at most over all channels.
    let maxHeldJoins: Int
    private var held: [String: (since: Duration, joins: [HeldJoin])] = [:]
    private(set) var heldJoins = 0

    init(timeout: Duration = .seconds(5), maxHeldJoins: Int = 10_000) {
        self.timeout = timeout
        self.maxHeldJoins = maxHeldJoins
    }

    /// Whether a claim for `channel` is under way.
    func isPending(_ channel: String) -> Bool { held[channel] != nil }

    /// Holds a join until its channel's claim is answered.
    mutating func hold(_ join: HeldJoin, now: Duration) -> Hold {
        guard heldJoins < maxHeldJoins else { return .full }
        heldJoins += 1
        if held[join.channel] != nil {
            held[join.channel]!.joins.append(join)
            return .waiting
        }
        held[join.channel] = (now, [join])
        return .claim
    }

    /// The claim for `channel` was answered: the joins it held, oldest first.
    mutating func resolve(_ channel: String) -> [HeldJoin] {
        guard let entry = held.removeValue(forKey: channel) else { return [] }
        heldJoins -= entry.joins.count
        return entry.joins
    }

    /// The claims unanswered for ``timeout``: their joins, to refuse.
    mutating func expire(now: Duration) -> [HeldJoin] {
        let late = held.filter { now - $0.value.since >= timeout }.keys.sorted()
        return late.flatMap { resolve($0) }
    }
}

extension EdgeShell {
    /// Holds a join for a channel this edge does not host while the channel's owner coordinator
    /// is asked (see ``ChannelClaims``). Joins for hosted channels, joins the plane refuses anyway
    /// (no session, a bad token) and joins on an edge without a link to the coordinators (a
    /// standalone edge) go straight to the plane.
    ///
    /// - Returns: Whether the join was held (or refused here); false: hand it to the plane.
    func holdForClaim(_ request: EdgeRequest, from session: SessionID, requestID: UInt64, relayed: Bool = false) -> Bool {
        guard case .join(let channel, let uid, let token, _, _) = request, let reports = coordinatorReports else {
            return false
        }
        let now = self.now
        if !claims.isPending(channel) {
            // A relayed channel is hosted until its book lets it go (a broadcaster's join asks
            // again: `relayed`); a relay link joins the origin's channel as the coordinator
            // already placed it.
            guard relayed || (!plane.hosts(channel: channel) && !relays.isRelayed(channel)),
                  !(plane.isRelayLink(session) && RelayLinkIdentity.isLinkUID(uid)),
                  plane.session(session) != nil,
                  case .success = verify(token, channel: channel, uid: uid, now: now)
            else { return false }
        }
        let join = ChannelClaims.HeldJoin(session: session, requestID: requestID, request: request, channel: channel)
        switch claims.hold(join, now: now) {
        case .claim: reports.claim(channel)
        case .waiting: break
        case .full:
            refuseHeld(join, .unavailable("too many joins wait for the room-coordinators' word on their channels; join again in a moment"))
        }
        return true
    }

    /// The owner coordinator answered the claim for `channel`: the joins held for it go to the
    /// plane, or are refused with the answer's error (`CHANNEL_ELSEWHERE` names the edge to join).
    /// An answer with `relay_of_*` makes this edge host the channel as a relay (see
    /// ``RelayBook/claimAnswered(_:_:hostedHere:now:)``): its held broadcaster joins are refused,
    /// naming the origin.
    func claimAnswered(_ channel: String, _ outcome: ClaimOutcome) {
        performRelay(relays.claimAnswered(channel, outcome, hostedHere: plane.hosts(channel: channel), now: now))
        let joins = claims.resolve(channel)
        for join in joins {
            switch outcome {
            case .admit where draining, .placed where draining, .relay where draining:
                refuseHeld(join, .unavailable("this edge is shutting down; join the channel again through the cluster"))
            case .admit, .placed, .relay:
                if let error = relays.refusal(of: join.request) {
                    refuseHeld(join, error)
                } else {
                    handOver(join.request, from: join.session, requestID: join.requestID)
                }
            case .refuse(let error):
                refuseHeld(join, error)
            }
        }
    }

    /// Refuses the joins whose claim went unanswered: the channel may be placed elsewhere, so
    /// admitting could split it.
    func expireClaims() {
        for join in claims.expire(now: now) {
            refuseHeld(join, .unavailable(
                "the room-coordinators did not say within \(claims.timeout) whether channel '\(join.channel)' may be hosted here; join again in a moment"))
        }
    }

    private func refuseHeld(_ join: ChannelClaims.HeldJoin, _ error: ShowroomError) {
        if join.requestID != 0 {
            perform([.reply(EdgeReply(requestID: join.requestID, kind: .join, result: .failure(error)), to: join.session)])
        } else {
            perform([.send(.error(error, channel: join.channel, track: nil), to: join.session)])
        }
    }
}
