import Edge
import Logging
import Membership
import Metrics
import NodeRuntime
import Routing
import ShowroomWire

/// The edge as ``CoordinatorLink`` reaches it. Called on the link's thread, and every completion
/// runs there too: the node's process hops to the edge's loop and back (``EdgeOnNodeLoop``); a
/// single-threaded harness calls the edge's shell directly.
protocol CoordinatorLinkEdge: AnyObject {
    /// The owner coordinator's answer to a channel claim (see ``CoordinatorReports/claim``).
    func claimAnswered(_ channel: String, _ outcome: ClaimOutcome)
    /// A coordinator's answer to a forward destination's placement.
    func forwardPlaced(_ placement: ForwardPlacement, _ result: Result<ForwardEdge, ShowroomError>)
    /// Carries out a coordinator's `FORWARD_COMMAND`: the destinations after it.
    func forwardCommand(_ command: EdgeForwardCommand, completion: @escaping (Result<[ForwardDestinationStatus], ShowroomError>) -> Void)
    /// The forwards the edge runs.
    func forwardedPublishers(_ completion: @escaping ([EdgeForwardedPublisher]) -> Void)
    /// Enforces bans: how many connections were closed, or `INVALID_ARGUMENT` (nothing applied).
    func applyBans(_ bans: [RoomBan], completion: @escaping (Result<Int, ShowroomError>) -> Void)
    /// Applies stages: how many broadcasters became audience.
    func applyStages(_ stages: [RoomStage], completion: @escaping (Result<Int, ShowroomError>) -> Void)
    /// Channels the edge hosts that their owner coordinator placed on another edge: their
    /// connections are sent there.
    func channelsElsewhere(_ channels: [RoomChannelElsewhere])
    /// Who is in a channel on this edge (`CHANNEL_USERS`).
    func channelUsers(_ request: RoomChannelUsersRequest, completion: @escaping (Result<RoomChannelUsersResponse, ShowroomError>) -> Void)
    /// Delivers a message from the business server to the channel's users here (`CHANNEL_DATA`).
    func channelData(_ request: RoomChannelDataRequest, completion: @escaping (Result<RoomChannelDataResponse, ShowroomError>) -> Void)
    /// Takes a coordinator's recording orders (`EDGE_RECORDINGS`): how many publishers are recorded.
    func applyRecordings(_ request: RoomEdgeRecordingsRequest, completion: @escaping (Result<Int, ShowroomError>) -> Void)
}

/// The edge's side of the room-coordinators, on the node's thread: it sends the channel
/// activities and summaries the edge hands over (``CoordinatorOutbox`` decides what goes where
/// and when), answers `EDGE_BANS`, `EDGE_STAGE`, `FORWARD_COMMAND` and `FORWARD_LIST` through the
/// edge, and fetches the bans in force (`BAN_LIST`) once at start.
///
/// It reaches the cluster through ``NodeServices`` alone and reads time from the node's clock,
/// so it runs on a ZeroMQ node and on an in-process network alike.
final class CoordinatorLink {
    private let node: any NodeServices
    private let edge: any CoordinatorLinkEdge
    private let nodeID: String
    private let logger: Logger
    private var outbox = CoordinatorOutbox()
    private var time: ElapsedTime
    /// This run of the edge, as the coordinators know its activities: new on every start.
    private let activityOrigin: String
    /// Activities numbered in this run.
    private var activitiesNumbered: UInt64 = 0
    private let requestTimeout: Duration = .seconds(2)
    private let dropped = Counter(label: "edge.coordinator_activities_dropped")
    private let queued = Gauge(label: "edge.coordinator_activities_queued")
    /// `BAN_LIST` at start: asked until a coordinator answers.
    private var banListDone = false
    private var banListInFlight = false
    private var nextBanListAttempt: Duration = .zero
    private var banListRotation = 0
    /// The edge drains: its reports say so, and coordinators place nothing on it.
    private var draining = false
    /// The alive coordinators that announce a cluster endpoint, and those endpoints by node id.
    private var coordinatorsView = MembershipView { node -> (ring: OwnerRing, endpoints: [String: String]) in
        let members = node.alive(.coordinator).filter { !$0.metadata.clusterEndpoint.isEmpty }
        let endpoints = Dictionary(members.map { ($0.nodeID, $0.metadata.clusterEndpoint) }) { first, _ in first }
        return (OwnerRing(.coordinator, of: members), endpoints)
    }

    private init(node: any NodeServices, edge: any CoordinatorLinkEdge, run: String, logger: Logger) {
        self.node = node
        self.edge = edge
        self.nodeID = node.nodeID
        self.logger = logger
        time = ElapsedTime(node.clock)
        activityOrigin = "\(node.nodeID)/\(run)"
    }

    /// Starts the link: registers the handlers of what the coordinators ask the edge, and the
    /// timer. On the node's thread. The edge's reports reach the link through the methods of
    /// "From the edge", on the same thread.
    ///
    /// - Parameters:
    ///   - node: The edge's node.
    ///   - edge: The edge.
    ///   - run: Names this run of the edge in its activities' origin: different on every start.
    ///   - logger: Where the link logs.
    static func start(node: any NodeServices, edge: any CoordinatorLinkEdge, run: String, logger: Logger) -> CoordinatorLink {
        let link = CoordinatorLink(node: node, edge: edge, run: run, logger: logger)
        node.serve(.edgeBans) { request, respond in link.handleBans(request, respond) }
        node.serve(.edgeStage) { request, respond in link.handleStages(request, respond) }
        node.serve(.edgeRecordings) { request, respond in link.handleRecordings(request, respond) }
        node.serve(.forwardCommand) { request, respond in link.handleForwardCommand(request, respond) }
        node.serve(.forwardList) { _, respond in link.handleForwardList(respond) }
        node.serve(.channelUsers) { request, respond in link.handleChannelUsers(request, respond) }
        node.serve(.channelData) { request, respond in link.handleChannelData(request, respond) }
        node.onMembershipChange { link.pump() }
        node.scheduleRepeating(every: .milliseconds(25)) { link.pump() }
        return link
    }

    private var now: Duration { time.now() }

    /// Activities not yet accepted by a coordinator (queued or in flight).
    var pendingActivities: Int { outbox.queued + outbox.inFlightCount }

    // MARK: - From the edge

    /// Channel activities, in the order the plane saw them, times on the wall clock.
    func add(_ activities: [RoomChannelActivity]) {
        // Numbered in this run, so a coordinator that gets one twice (resent after a lost answer)
        // numbers it once.
        let activities = activities.map { activity in
            var activity = activity
            activitiesNumbered += 1
            activity.origin = activityOrigin
            activity.originSequence = activitiesNumbered
            return activity
        }
        let lost = outbox.add(activities)
        if lost > 0 { countDropped(lost, why: "the queue is full") }
        pump()
    }

    /// Tells every alive coordinator at once that the edge drains (each report from now on says
    /// so too), so that none places a client here after the clients were told to move.
    func announceDraining(_ announced: @escaping () -> Void) {
        draining = true
        let endpoints = coordinators().endpoints.values
        var remaining = endpoints.count
        guard remaining > 0 else { return announced() }
        var report = RoomEdgeChannelReport()
        report.edgeID = nodeID
        report.origin = activityOrigin
        report.draining = true
        for endpoint in endpoints {
            node.send(.edgeChannelReport, body: report, to: endpoint, timeout: .seconds(1)) { _ in
                remaining -= 1
                if remaining == 0 { announced() }
            }
        }
    }

    /// Every hosted channel, for every coordinator.
    func setSummary(_ channels: [ChannelSummary]) {
        outbox.setSummary(channels.map { EdgeCodec.wire($0, edge: nodeID) })
        pump()
    }

    // MARK: - Sending

    /// The alive coordinators and their endpoints: made again only when the membership changed
    /// (every channel report asks).
    private func coordinators() -> (ring: OwnerRing, endpoints: [String: String]) {
        coordinatorsView.value(of: node)
    }

    /// Sends what is due.
    private func pump() {
        let (coordinators, endpoints) = self.coordinators()
        let now = self.now
        for request in outbox.due(coordinators: coordinators, now: now) {
            send(request, to: endpoints[request.coordinator]!)
        }
        queued.record(outbox.queued)
        if !banListDone, !banListInFlight, nextBanListAttempt <= now {
            askForBans(endpoints)
        }
    }

    private func send(_ request: CoordinatorOutbox.Request, to endpoint: String) {
        var report = RoomEdgeChannelReport()
        report.edgeID = nodeID
        report.origin = activityOrigin
        report.activities = request.activities
        report.draining = draining
        if let channels = request.channels {
            report.channels = channels
            report.hasChannels_p = true
        }
        node.send(.edgeChannelReport, body: report, to: endpoint, timeout: requestTimeout) { [self] result in
            var delivered = true
            switch result {
            case .success(let answer):
                if answer.failure == nil, request.channels != nil,
                   let body = try? answer.decodeBody(RoomEdgeChannelReportResponse.self), !body.elsewhere.isEmpty {
                    edge.channelsElsewhere(body.elsewhere)
                }
                if let error = answer.failure {
                    if error.code == .invalidArgument || error.code == .malformedMessage {
                        // Sending the same again cannot help.
                        logger.warning("coordinator \(request.coordinator) refused a channel report: \(error)")
                        if !request.activities.isEmpty { countDropped(request.activities.count, why: "refused") }
                    } else {
                        logger.debug("coordinator \(request.coordinator) failed a channel report: \(error); retrying")
                        delivered = false
                    }
                }
            case .failure(let error):
                logger.debug("channel report to coordinator \(request.coordinator) failed: \(error); retrying")
                delivered = false
            }
            let lost = outbox.completed(request.id, delivered: delivered, now: self.now)
            if lost > 0 { countDropped(lost, why: "the queue is full") }
            if !delivered { pump() }
        }
    }

    private func countDropped(_ count: Int, why: String) {
        dropped.increment(by: Int64(count))
        logger.warning("dropped \(count) channel activities for the room-coordinators: \(why)")
    }

    // MARK: - Channel claims

    /// Asks the channel's owner coordinator (`CHANNEL_CLAIM`) whether this edge may host `channel`,
    /// and hands the answer to the edge. With no coordinator alive at all the join is admitted, as
    /// the SDK's own fallback places channels by hashing then; a claim that goes unanswered is
    /// refused `UNAVAILABLE`, since the channel may be placed elsewhere.
    func claim(_ channel: String) {
        let (coordinators, endpoints) = self.coordinators()
        guard let owner = coordinators.owner(of: channel), let endpoint = endpoints[owner]
        else {
            logger.debug("no room-coordinator alive: admitting the join for channel \(channel)")
            edge.claimAnswered(channel, .admit)
            return
        }
        var body = RoomClaimChannelRequest()
        body.channel = channel
        body.edgeID = nodeID
        node.send(.channelClaim, body: body, to: endpoint, timeout: requestTimeout) { [self] result in
            edge.claimAnswered(channel, Self.outcome(of: result, channel: channel, coordinator: owner))
        }
    }

    /// What a claim's answer means for the joins it held.
    static func outcome(of result: Result<WireEnvelope, ShowroomError>, channel: String, coordinator: String) -> ClaimOutcome {
        let answer: WireEnvelope
        switch result {
        case .success(let envelope): answer = envelope
        case .failure(let error):
            return .refuse(.unavailable(
                "room-coordinator \(coordinator) did not answer whether channel '\(channel)' may be hosted here (\(error.code)); join again in a moment"))
        }
        if let error = answer.failure {
            // A coordinator from before claims existed: it places by CHANNEL_PLACE alone.
            if error.code == .unknownKind { return .admit }
            return .refuse(error)
        }
        guard let body = try? answer.decodeBody(RoomClaimChannelResponse.self) else {
            return .refuse(.unavailable("room-coordinator \(coordinator) answered a channel claim unreadably; join again in a moment"))
        }
        if body.granted {
            guard !body.relayOfEdgeID.isEmpty, !body.relayOfEndpoint.isEmpty else { return .placed }
            return .relay(RelayOrigin(id: body.relayOfEdgeID, endpoint: body.relayOfEndpoint, curvePublicKey: body.relayOfCurvePublicKey))
        }
        guard !body.edgeID.isEmpty, !body.clientEndpoint.isEmpty else {
            return .refuse(.unavailable("channel '\(channel)' is placed on another edge that is not reachable now; join again in a moment"))
        }
        var redirect = WireRedirect()
        redirect.edgeID = body.edgeID
        redirect.clientEndpoint = body.clientEndpoint
        redirect.clientCurvePublicKey = body.clientCurvePublicKey
        return .refuse(.channelElsewhere(
            "channel '\(channel)' is hosted on edge \(body.edgeID) (\(body.clientEndpoint)); join it there", redirect: redirect))
    }

    // MARK: - Forwards

    /// Asks the destination channel's owner coordinator where it is hosted (`CHANNEL_PLACE` with
    /// the destination token, as a client would), placing it if it is not yet.
    func place(_ placement: ForwardPlacement) {
        let (coordinators, endpoints) = self.coordinators()
        guard let owner = coordinators.owner(of: placement.destination), let endpoint = endpoints[owner] else {
            edge.forwardPlaced(placement, .failure(ShowroomError(.noCoordinator, "no room-coordinator is alive to place channel '\(placement.destination)'")))
            return
        }
        var body = RoomPlaceChannelRequest()
        body.channel = placement.destination
        body.uid = placement.key.uid
        body.token = placement.token
        if let unreachable = placement.unreachableEdge { body.unreachableEdge = unreachable }
        node.send(.channelPlace, body: body, to: endpoint, timeout: requestTimeout) { [self] result in
            edge.forwardPlaced(placement, Self.placement(of: result, channel: placement.destination, coordinator: owner))
        }
    }

    /// What a placement's answer means for a forward.
    static func placement(of result: Result<WireEnvelope, ShowroomError>, channel: String, coordinator: String) -> Result<ForwardEdge, ShowroomError> {
        Result { () throws(ShowroomError) in
            let answer = try result.get()
            if let error = answer.failure { throw error }
            let body = try answer.decodeBody(RoomPlaceChannelResponse.self)
            guard !body.edgeID.isEmpty, !body.clientEndpoint.isEmpty else {
                throw .unavailable("room-coordinator \(coordinator) placed channel '\(channel)' on no reachable edge")
            }
            return ForwardEdge(id: body.edgeID, endpoint: body.clientEndpoint, curvePublicKey: body.clientCurvePublicKey)
        }
    }

    /// `FORWARD_COMMAND`: carried out by the edge.
    private func handleForwardCommand(_ request: WireEnvelope, _ respond: Node.Responder) {
        let command: EdgeForwardCommand
        do {
            command = try request.decodeBody(EdgeForwardCommand.self)
        } catch {
            respond(.failure(error))
            return
        }
        edge.forwardCommand(command) { result in
            respond(result.map { destinations in
                EdgeForwardCommandResponse.with { $0.destinations = destinations.map(EdgeCodec.wire) }
            }.outcome)
        }
    }

    /// `FORWARD_LIST`: the edge's forwards.
    private func handleForwardList(_ respond: Node.Responder) {
        let nodeID = self.nodeID
        edge.forwardedPublishers { forwards in
            var response = EdgeForwardListResponse()
            response.edgeID = nodeID
            response.forwards = forwards
            respond(.success(response))
        }
    }

    // MARK: - Bans

    /// `EDGE_BANS`: applied by the edge.
    private func handleBans(_ request: WireEnvelope, _ respond: Node.Responder) {
        let body: RoomEdgeBansRequest
        do {
            body = try request.decodeBody(RoomEdgeBansRequest.self)
        } catch {
            respond(.failure(error))
            return
        }
        edge.applyBans(body.bans) { result in
            respond(result.map { closed in
                RoomEdgeBansResponse.with { $0.connectionsClosed = UInt32(clamping: closed) }
            }.outcome)
        }
    }

    /// `CHANNEL_USERS`: the edge's users in a channel, each named with this edge.
    private func handleChannelUsers(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ try request.decodeBody(RoomChannelUsersRequest.self) }) else { return }
        let nodeID = self.nodeID
        edge.channelUsers(body) { result in
            respond(result.map { answer in
                var answer = answer
                for index in answer.users.indices { answer.users[index].edge = nodeID }
                return answer
            }.outcome)
        }
    }

    /// `CHANNEL_DATA`: a message from the business server to the channel's users here.
    private func handleChannelData(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ try request.decodeBody(RoomChannelDataRequest.self) }) else { return }
        edge.channelData(body) { respond($0.outcome) }
    }

    /// `EDGE_STAGE`: applies the stages, answers how many were made audience.
    private func handleStages(_ request: WireEnvelope, _ respond: Node.Responder) {
        let body: RoomEdgeStageRequest
        do {
            body = try request.decodeBody(RoomEdgeStageRequest.self)
        } catch {
            respond(.failure(error))
            return
        }
        edge.applyStages(body.stages) { result in
            respond(result.map { demoted in
                RoomEdgeStageResponse.with { $0.connectionsDemoted = UInt32(clamping: demoted) }
            }.outcome)
        }
    }

    /// `EDGE_RECORDINGS`: takes a coordinator's orders, answers how many publishers are recorded.
    private func handleRecordings(_ request: WireEnvelope, _ respond: Node.Responder) {
        let body: RoomEdgeRecordingsRequest
        do {
            body = try request.decodeBody(RoomEdgeRecordingsRequest.self)
        } catch {
            respond(.failure(error))
            return
        }
        edge.applyRecordings(body) { result in
            respond(result.map { recording in
                RoomEdgeRecordingsResponse.with { $0.recording = UInt32(clamping: recording) }
            }.outcome)
        }
    }

    /// Asks one alive coordinator (a different one each attempt) for the bans in force.
    private func askForBans(_ coordinators: [String: String]) {
        guard !coordinators.isEmpty else { return }
        let ids = coordinators.keys.sorted()
        let id = ids[banListRotation % ids.count]
        banListRotation += 1
        banListInFlight = true
        node.send(.banList, body: RoomBanListRequest(), to: coordinators[id]!, timeout: requestTimeout) { [self] result in
            banListInFlight = false
            let list: RoomBanListResponse
            do {
                let answer = try result.get()
                if let error = answer.failure { throw error }
                list = try answer.decodeBody(RoomBanListResponse.self)
            } catch {
                logger.debug("coordinator \(id) did not answer the ban list: \(error); asking again in a second")
                nextBanListAttempt = now + .seconds(1)
                return
            }
            banListDone = true
            guard !list.bans.isEmpty else { return }
            let logger = self.logger
            edge.applyBans(list.bans) { result in
                switch result {
                case .success(let closed):
                    logger.info("applied \(list.bans.count) bans from coordinator \(id); \(closed) connections closed")
                case .failure(let error):
                    logger.warning("the ban list from coordinator \(id) is malformed: \(error)")
                }
            }
        }
    }
}
