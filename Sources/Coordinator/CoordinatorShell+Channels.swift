import Foundation
import Membership
import NodeRuntime
import Rooms
import Routing
import ShowroomAuth
import ShowroomWire
import SwiftProtobuf
import Webhooks

extension CoordinatorShell {
    // MARK: - Placement

    /// Which edge hosts a channel: asked of the channel's owner coordinator, which keeps the answer
    /// while that edge lives. Only for the holder of a token that lets it join the channel, or a
    /// signed admin request: a placement is state every coordinator keeps.
    func placeChannel(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws -> RoomPlaceChannelRequest in
            let body = try request.decodeBody(RoomPlaceChannelRequest.self)
            try ChannelDirectory.check(body)
            try authorizePlacement(body, nowMs: nowMs)
            return body
        }) else { return }
        atChannelOwner(request, channel: body.channel, respond) { [self] in place(body, respond) }
    }

    /// Serves `request` at the owner coordinator of `channel`
    /// (``CoordinatorNode/channelOwner(toAsk:forwarded:endpoint:)``): passes it on (once) and
    /// relays the answer, or serves it here with `locally`. An owner that did not answer leads to
    /// `ownerFailed` with its id and the error, or by default to `locally` (placement is sticky
    /// per edge, so both answers agree while the edge lives).
    func atChannelOwner(_ request: WireEnvelope, channel: String, _ respond: Node.Responder,
                        ownerFailed: ((String, ShowroomError) -> Void)? = nil, locally: @escaping () -> Void) {
        guard let (owner, endpoint) = machine.channelOwner(toAsk: channel, forwarded: request.forwarded,
                                                           endpoint: { clusterEndpoint(of: $0) }) else {
            return locally()
        }
        node.forward(request, to: endpoint, timeout: Self.peerTimeout) { result in
            switch result {
            case .success(let answer): respond(.relayed(answer))
            case .failure(let error):
                guard let ownerFailed else { return locally() }
                ownerFailed(owner, error)
            }
        }
    }

    /// Checks that a placement request may place: an admin signature over
    /// "place|<channel>|0|<issued_at_ms>", or a token with the join privilege for the channel and uid.
    private func authorizePlacement(_ body: RoomPlaceChannelRequest, nowMs: Int64) throws(ShowroomError) {
        if body.hasAdmin {
            return try verifyAdmin(body.admin, action: "place", target: body.channel, uid: 0, nowMs: nowMs)
        }
        try credentials.verifyToken(body.token, channel: body.channel, uid: body.uid, nowMs: nowMs, needed: "placements need",
            missing: "placing channel '\(body.channel)' needs the token the client joins with (uid and token), or an admin signature")
    }

    /// Places `body`'s channel once the edge its client could not reach, if any, is probed
    /// (``ChannelDirectory/probe(for:endpoint:linkBroken:)``), and answers.
    private func place(_ body: RoomPlaceChannelRequest, _ respond: Node.Responder) {
        switch ChannelDirectory.probe(for: body, endpoint: { clusterEndpoint(of: $0) }, linkBroken: { node.connectionBroken(to: $0) }) {
        case .none:
            answer(Result { () throws(ShowroomError) in try machine.records.directory.placement(for: body, edges: directoryEdges(), nowMs: nowMs) },
                   channel: body.channel, respond)
        case .avoid(let edge):
            place(body, avoiding: edge, respond)
        case .probe(let edge, let endpoint):
            node.send(.nodeInfo, body: WireNodeInfoRequest(), to: endpoint, timeout: Self.probeTimeout) { [self] result in
                place(body, avoiding: result.refusal == nil ? nil : edge, respond)
            }
        }
    }

    /// Places `body`'s channel avoiding `avoiding` (an edge neither the client nor this
    /// coordinator reaches) and answers.
    private func place(_ body: RoomPlaceChannelRequest, avoiding: String?, _ respond: Node.Responder) {
        answer(Result { () throws(ShowroomError) in
            try machine.records.directory.place(body.channel, edges: directoryEdges(), avoiding: avoiding, preferring: body.preferredEdges,
                                                nowMs: nowMs)
        }, channel: body.channel, respond)
    }

    /// The alive edges that serve clients, as the directory's decisions take them.
    func directoryEdges() -> [ChannelDirectory.Edge] {
        alive(.edge).filter { !$0.metadata.clientEndpoint.isEmpty }.map {
            ChannelDirectory.Edge(id: $0.nodeID, channels: $0.metadata.load.channels,
                                  linkBroken: node.connectionBroken(to: $0.metadata.clusterEndpoint),
                                  clientEndpoint: $0.metadata.clientEndpoint, clientCurvePublicKey: $0.metadata.clientCurvePublicKey,
                                  webSocketEndpoint: $0.metadata.webSocketEndpoint)
        }
    }

    /// Answers a placement request with where clients connect to the edge it got
    /// (``ChannelDirectory/placementAnswer(edge:among:)``), once the placement it made, if any,
    /// is persisted and handed to the other coordinators.
    private func answer(_ placement: Result<ChannelDirectory.Placement, ShowroomError>, channel: String, _ respond: Node.Responder) {
        let answer = { [self] (edge: String) in
            respond(Result { () throws(ShowroomError) in try ChannelDirectory.placementAnswer(edge: edge, among: directoryEdges()) }.outcome)
        }
        switch placement {
        case .failure(let error):
            respond(.failure(error))
        case .success(.relay(let edge)), .success(.placed(let edge, nil)):
            answer(edge)
        case .success(.placed(let edge, let recorded?)):
            logger.info("channel placed", metadata: ["channel": "\(channel)", "edge": "\(edge)"])
            record(recorded) { answer(edge) }
        }
    }

    /// Persists a placement change (a placement, or a tombstone for a removal) and hands it to the
    /// other coordinators; `done` runs once they answered.
    func record(_ placement: RoomChannelPlacement, then done: (() -> Void)? = nil) {
        if placement.edgeID.isEmpty {
            storage.write { try $0.delete(placementsOf: [placement.channel]) }
        } else {
            storage.write { try $0.save(placements: [placement]) }
        }
        var batch = RoomStateBatch()
        batch.placements = [placement]
        replicateClusterWide(batch, then: done)
    }

    /// `CHANNEL_CLAIM`: an edge is asked to join a channel it does not host. Granted (the channel
    /// placed there) unless the channel is hosted by or placed on another alive edge, which the
    /// answer names. Decided by the channel's owner coordinator, so two edges claiming at once
    /// get one answer.
    func claimChannel(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws -> RoomClaimChannelRequest in
            let body = try request.decodeBody(RoomClaimChannelRequest.self)
            try ChannelDirectory.check(body)
            return body
        }) else { return }
        atChannelOwner(request, channel: body.channel, respond) { [self] in decideClaim(body, respond) }
    }

    /// Decides a claim at the channel's owner (``ChannelDirectory/claim(_:edges:nowMs:)``) and
    /// answers, once the placement it made, if any, is persisted and handed to the other
    /// coordinators.
    private func decideClaim(_ body: RoomClaimChannelRequest, _ respond: Node.Responder) {
        do throws(ShowroomError) {
            let (answer, recorded) = try machine.records.directory.claim(body, edges: directoryEdges(), nowMs: nowMs)
            guard let recorded else { return respond(.success(answer)) }
            logger.info("channel placed by a claim", metadata: [
                "channel": "\(body.channel)", "edge": "\(recorded.edgeID)", "claimed by": "\(body.edgeID)",
            ])
            record(recorded) { respond(.success(answer)) }
        } catch {
            respond(.failure(error))
        }
    }

    /// Drops the placements of this coordinator's channels that no edge reported for the
    /// placement expiry: requests that never led to a join leave nothing behind.
    func expirePlacements(nowMs: Int64) {
        let removed = machine.records.directory.expire(nowMs: nowMs, owned: { [ownership] in ownership.owns($0) })
        guard !removed.isEmpty else { return }
        logger.info("unused channel placements expired", metadata: ["channels": "\(removed.count)"])
        let channels = removed.map(\.channel)
        storage.write { try $0.delete(placementsOf: channels) }
        var batch = RoomStateBatch()
        batch.placements = removed
        replicateClusterWide(batch)
    }

    // MARK: - Edge reports and channel events

    /// An edge's report: activities to number, publish and post (their order kept), and its channels.
    func edgeReport(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let report = respond.answering({ () throws -> RoomEdgeChannelReport in
            let report = try request.decodeBody(RoomEdgeChannelReport.self)
            try RecordingOrders.check(report.activities)
            return report
        }) else { return }
        // The users listed from this edge, or in a channel it reports, may have changed.
        var reported = Set(report.activities.map(\.channel))
        if report.hasChannels_p { reported.formUnion(report.channels.map(\.name)) }
        userReads.heard(from: report.hasChannels_p ? report.edgeID : nil, about: reported)
        let writable = seesMostOfTheCluster  // one look at the members, not one per activity
        let taken = machine.edgeReported(report, edges: directoryEdges(), edgeAlive: alive(.edge).contains { $0.nodeID == report.edgeID },
                                         seesMostOfTheCluster: writable, nowMs: nowMs)
        if taken.beganDraining {
            logger.info("edge draining: nothing more is placed on it", metadata: ["edge": "\(report.edgeID)"])
        }
        for placement in taken.placed {
            logger.info("channel hosted on several edges without a placement: placed where its publishers are",
                        metadata: ["channel": "\(placement.channel)", "edge": "\(placement.edgeID)"])
            record(placement)
        }
        let answer = taken.answer
        if !answer.elsewhere.isEmpty {
            logger.info("channels hosted away from their placement: their clients go there", metadata: [
                "edge": "\(report.edgeID)", "channels": "\(answer.elsewhere.map(\.channel))",
            ])
        }
        guard !report.activities.isEmpty else {
            respond(.success(answer))
            return
        }
        // Only a channel's owner numbers its events, and only once it holds the numbers given so
        // far: the edge sends again, to the owner its view names then.
        switch machine.number(report.activities, from: report.edgeID, seesMostOfTheCluster: writable, nowMs: nowMs) {
        case .refused(let reason):
            respond(.failure(.unavailable("coordinator \(selfID) \(reason); send the activities again in a moment")))
        case .numbered(let numbered):
            publish(numbered.inherited)
            settle(numbered) { respond(.success(answer)) }
            // A report from an edge's new run: the old run's users left without a word.
            departGoneRuns()
        }
    }

    /// Numbers the leaves nobody will report (``CoordinatorNode/departGoneRuns(seesMostOfTheCluster:nowMs:)``)
    /// and settles them.
    func departGoneRuns() {
        guard let departed = machine.departGoneRuns(seesMostOfTheCluster: seesMostOfTheCluster, nowMs: nowMs) else { return }
        logger.info("users of edges gone left their channels", metadata: [
            "channels": "\(departed.channels.count)", "events": "\(departed.events.count)",
        ])
        settle(departed) {}
    }

    /// Carries out what numbering changed in the records of its channels: persists the records,
    /// tells the call's owner, the rooms and their co-hosts, and hands the records to the
    /// successors; the events go out once the successors hold their numbers, then `done` runs (at
    /// once when nothing changed).
    private func settle(_ numbered: CoordinatorNode.Numbered, then done: @escaping () -> Void) {
        guard !numbered.channels.isEmpty else { return done() }
        let now = nowMs
        let (activities, events) = (numbered.activities, numbered.events)
        passOnCallChannelActivities(activities)
        let writes = machine.sequenceWrites(of: numbered.channels)
        let sequences = writes.map(\.sequence)
        storage.write { try $0.save(sequences: sequences) }
        // Owner presence keeps rooms open while their owner is in the channel.
        let presence = machine.records.registry.ownerPresence(after: activities, nowMs: now)
        apply(presence, replicate: true)
        // A co-host who quits the room's channel steps down.
        carryOut(InteractionPlan(machine.records.registry.coHostsLeft(after: activities, nowMs: now), roomID: "")) { _ in }
        // The successors learn the numbers before anyone sees the events, so a successor taking over
        // never reuses a number.
        var remaining = writes.count
        for (sequence, batches) in writes {
            replicate(batches, key: sequence.channel, settled: { [self] in
                remaining -= 1
                guard remaining == 0 else { return }
                publish(machine.settled(events))
                done()
            })
        }
    }

    /// Publishes what earlier owners numbered and may not have published, in the channels this
    /// coordinator writes (``CoordinatorNode/takeInherited(of:writes:)``).
    func publishInherited() {
        publish(machine.takeInherited(writes: writableKeys))
    }

    /// Sends `events` to the subscribers and the webhooks.
    private func publish(_ events: [RoomChannelEvent]) {
        for event in events {
            if let filed = machine.records.recordings.saw(event) { replicate([filed]) }
            publisher.publish(topic: "channel/\(event.channel)", kind: .channelEvent, body: event)
            webhooks?.enqueue(event)
        }
    }

    /// Call events from a call-signal node: published on the events endpoint (topic
    /// `call/<call id>`) and posted to the webhooks. A report is checked whole before anything of
    /// it goes out (``CallChannels/validate(_:)``).
    func publishCallEvents(_ report: SignalCallEventReport) throws(ShowroomError) {
        try CallChannels.validate(report)
        for event in report.events {
            publisher.publish(topic: "call/\(event.callID)", kind: .callEvent, body: event)
            webhooks?.enqueue(WebhookEvent(event))
        }
    }

    /// Parties joining and leaving 1v1 call channels go on to the call's owner call-signal node
    /// (``CallChannels/activitiesByOwner(_:ring:)``), which watches the call's media.
    func passOnCallChannelActivities(_ activities: [RoomChannelActivity]) {
        for (owner, batch) in CallChannels.activitiesByOwner(activities, ring: node.ring(.callsignal)) {
            guard let endpoint = clusterEndpoint(of: owner) else { continue }
            node.send(.callChannelActivity, body: batch, to: endpoint, timeout: Self.peerTimeout) { [logger] result in
                if case .failure(let error) = result {
                    logger.warning("call channel activities not passed on", metadata: ["node": "\(owner)", "error": "\(error)"])
                }
            }
        }
    }

    /// Every channel the edges reported, with its room if this coordinator holds it.
    func listChannels() -> RoomListChannelsResponse {
        var answer = RoomListChannelsResponse()
        answer.coordinator = selfID
        answer.drainingEdges = machine.records.directory.draining.sorted()
        answer.channels = RoomChannelStatus.naming(machine.records.directory.reportedChannels, after: machine.records.registry.rooms.values)
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.edge < $1.edge }
        return answer
    }

    /// How long the edges have to answer a question about a channel (its users, a message).
    static let edgeAnswerTimeout = Duration.milliseconds(1500)

    /// `CHANNEL_USERS` (the server API): the edges that report the channel (its origin and its
    /// relays) asked who is there, their answers merged (``ChannelUserList``); an edge that does
    /// not answer in time is named in the answer, its users missing. Callers asking the same at
    /// once share the asking, and a complete answer serves until those edges report again or the
    /// channel's activity arrives (``SharedReads``).
    func channelUsers(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws -> RoomChannelUsersRequest in
            let body = try request.decodeBody(RoomChannelUsersRequest.self)
            try Names.validateChannel(body.channel)
            return body
        }) else { return }
        switch userReads.ask(body, topic: body.channel, for: respond, nowMs: nowMs) {
        case .answered(let answer): respond(.success(answer))
        case .askNow: askUsers(body)
        case .waits: break
        }
    }

    /// One round of ``channelUsers(_:_:)`` for `question`: its callers answered, and the next
    /// round asked if more arrived meanwhile.
    private func askUsers(_ question: RoomChannelUsersRequest) {
        let edges = machine.records.directory.edges(reporting: question.channel)
        askEdges(edges, .channelUsers, question, as: RoomChannelUsersResponse.self) { [self] answers, unanswered in
            let answer = ChannelUserList.merged(answers, unanswered: unanswered)
            let (callers, askAgain) = userReads.answered(question, with: answer, from: Set(edges), complete: unanswered.isEmpty, nowMs: nowMs)
            for respond in callers { respond(.success(answer)) }
            if askAgain { askUsers(question) }
        }
    }

    /// `CHANNEL_DATA` (the server API): a message from the business server handed to the
    /// channel's users on every edge that reports the channel.
    func channelData(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws -> RoomChannelDataRequest in
            let body = try request.decodeBody(RoomChannelDataRequest.self)
            try Names.validateChannel(body.channel)
            guard body.uids.count <= 100, body.data.count <= 1024 else {
                throw ShowroomError.invalidArgument("a message is at most 1024 bytes, to at most 100 uids")
            }
            return body
        }) else { return }
        askEdges(machine.records.directory.edges(reporting: body.channel), .channelData, body, as: RoomChannelDataResponse.self) { answers, unanswered in
            respond(.success(RoomChannelDataResponse.with {
                $0.delivered = answers.reduce(0) { $0 &+ $1.delivered }
                $0.unansweredEdges = unanswered.sorted()
            }))
        }
    }

    /// Asks `edges` (those whose latest report lists a channel, ``ChannelDirectory/edges(reporting:)``);
    /// `done` gets the answers of those that answered in time and the ids of those that did not.
    private func askEdges<Answer: SwiftProtobuf.Message>(
        _ edges: [String], _ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, as: Answer.Type,
        done: @escaping ([Answer], [String]) -> Void
    ) {
        var answers: [Answer] = []
        var unanswered: [String] = []
        var remaining = edges.count
        guard remaining > 0 else { return done([], []) }
        for edge in edges {
            let answered = { (answer: Answer?) in
                if let answer { answers.append(answer) } else { unanswered.append(edge) }
                remaining -= 1
                if remaining == 0 { done(answers, unanswered) }
            }
            guard let endpoint = node.clusterEndpoint(of: edge) else {
                answered(nil)
                continue
            }
            node.send(kind, body: body, to: endpoint, timeout: Self.edgeAnswerTimeout) { result in
                answered((try? result.get()).flatMap { answer in
                    answer.failure == nil ? try? answer.decodeBody(Answer.self) : nil
                })
            }
        }
    }

    // MARK: - Kick and ban

    /// Bans a uid from a channel and has every alive edge enforce it now.
    func kick(_ request: WireEnvelope, _ respond: Node.Responder) {
        let now = nowMs
        guard let ban = respond.answering({ () throws -> RoomBan in
            let body = try request.decodeBody(RoomKickRequest.self)
            let fresh = try BanList.ban(for: body, nowMs: now)
            try verifyAdmin(body.admin, action: "kick", target: body.channel, uid: body.uid, nowMs: now)
            return machine.records.bans.add(fresh)
        }) else { return }
        enforce(ban) { edges in
            var answer = RoomKickResponse()
            answer.ban = ban
            answer.edges = edges
            respond(.success(answer))
        }
    }

    /// `BAN_RULE` (the server API, on the cluster face): makes, changes, lifts or lists ban rules;
    /// every change is kept, replicated and enforced by every alive edge before the answer.
    func banRule(_ request: WireEnvelope, _ respond: Node.Responder) {
        let now = nowMs
        guard let change = respond.answering({ () throws -> BanList.RuleChange in
            try machine.records.bans.change(try request.decodeBody(RoomBanRuleRequest.self), nowMs: now)
        }) else { return }
        switch change {
        case .list(let rules):
            respond(.success(RoomBanRuleResponse.with { $0.rules = rules }))
        case .enforce(let rule, let keep):
            enforce(rule, keep: keep) { edges in
                respond(.success(RoomBanRuleResponse.with {
                    $0.rules = [rule]
                    $0.edges = edges
                }))
            }
        }
    }

    /// Keeps `ban` (unless `keep` is false: a kick that leaves no ban), replicates it to every
    /// coordinator and has every alive edge enforce it; `done` gets how many edges confirmed.
    private func enforce(_ ban: RoomBan, keep: Bool = true, done: @escaping (UInt32) -> Void) {
        if keep {
            storage.write { try $0.save(bans: [ban]) }
            var batch = RoomStateBatch()
            batch.bans = [ban]
            replicateClusterWide(batch)
        }
        var enforce = RoomEdgeBansRequest()
        enforce.bans = [ban]
        let edges = alive(.edge)
        var remaining = edges.count
        var confirmed: UInt32 = 0
        // Whoever the ban kicked out is listed no more: no kept user list outlives it.
        userReads.forgetAll()
        guard remaining > 0 else { return done(0) }
        for edge in edges {
            node.send(.edgeBans, body: enforce, to: edge.metadata.clusterEndpoint, timeout: Self.peerTimeout) { [self] result in
                if case .success(let answer) = result, answer.failure == nil { confirmed += 1 }
                remaining -= 1
                if remaining == 0 {
                    userReads.forgetAll()
                    done(confirmed)
                }
            }
        }
    }
}
