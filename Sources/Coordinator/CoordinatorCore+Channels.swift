import Foundation
import Membership
import NodeRuntime
import Rooms
import ShowroomWire
import SwiftProtobuf

extension CoordinatorCore {
    // MARK: - Placement

    /// Which edge hosts a channel: asked of the channel's owner coordinator, which keeps the answer
    /// while that edge lives.
    func placeChannel(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = answering(respond, { () throws -> RoomPlaceChannelRequest in
            let body = try request.decodeBody(RoomPlaceChannelRequest.self)
            guard !body.channel.isEmpty else { throw ShowroomError.invalidArgument("a channel name is needed to place it") }
            return body
        }) else { return }
        let owner = holders(of: body.channel).first ?? selfID
        if !request.forwarded, owner != selfID, let endpoint = clusterEndpoint(of: owner) {
            node.forward(request, to: endpoint, timeout: Self.peerTimeout) { [self] result in
                switch result {
                case .success(let answer): respond(.relayed(answer))
                // The owner is unreachable: any coordinator can place (placement is sticky per edge,
                // so both answers agree while the edge lives).
                case .failure: place(body, respond)
                }
            }
            return
        }
        place(body, respond)
    }

    private func place(_ body: RoomPlaceChannelRequest, _ respond: Node.Responder) {
        let current = placements.placements[body.channel]
        if !body.unreachableEdge.isEmpty, current?.edgeID == body.unreachableEdge,
           let endpoint = clusterEndpoint(of: body.unreachableEdge) {
            // A client could not reach the channel's edge: if this coordinator cannot either, the
            // channel moves now rather than when the membership declares the edge dead.
            node.send(.nodeInfo, body: WireNodeInfoRequest(), to: endpoint, timeout: Self.probeTimeout) { [self] result in
                let reachable: Bool
                if case .success(let answer) = result, answer.failure == nil { reachable = true } else { reachable = false }
                finishPlacement(body, avoiding: reachable ? nil : body.unreachableEdge, respond)
            }
            return
        }
        finishPlacement(body, avoiding: nil, respond)
    }

    private func finishPlacement(_ body: RoomPlaceChannelRequest, avoiding: String?, _ respond: Node.Responder) {
        let edges = alive(.edge).filter { !$0.metadata.clientEndpoint.isEmpty }
        do {
            let candidates = edges.map { (id: $0.id.rawValue, load: $0.metadata.load.channels) }
            let (placement, changed) = try placements.place(channel: body.channel, alive: candidates, avoiding: avoiding,
                                                            nowMs: Self.nowMs)
            guard let edge = edges.first(where: { $0.id.rawValue == placement.edgeID }) else {
                throw ShowroomError(.noEdgeAvailable, "edge \(placement.edgeID) is not alive; retry in a moment")
            }
            var answer = RoomPlaceChannelResponse()
            answer.edgeID = placement.edgeID
            answer.clientEndpoint = edge.metadata.clientEndpoint
            guard changed else {
                respond(.success(answer))
                return
            }
            logger.info("channel placed", metadata: ["channel": "\(body.channel)", "edge": "\(placement.edgeID)"])
            persist { try store.save(placements: [placement]) }
            var batch = RoomStateBatch()
            batch.placements = [placement]
            sendToOtherCoordinators(batch) { respond(.success(answer)) }
        } catch let error as ShowroomError {
            respond(.failure(error))
        } catch {
            respond(.failure(.internal("\(error)")))
        }
    }

    // MARK: - Edge reports and channel events

    /// An edge's report: activities to number, publish and post (their order kept), and its channels.
    func edgeReport(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let report = answering(respond, { try request.decodeBody(RoomEdgeChannelReport.self) }) else { return }
        if report.hasChannels_p { edgeChannels[report.edgeID] = report.channels }
        guard !report.activities.isEmpty else {
            respond(.success(RoomEdgeChannelReportResponse()))
            return
        }
        let now = Self.nowMs
        // An activity sent again (its first answer was lost) is numbered once: skip what was.
        var fresh: [RoomChannelActivity] = []
        var events: [RoomChannelEvent] = []
        for activity in report.activities {
            guard let event = sequencer.number(activity, edge: report.edgeID, nowMs: now) else { continue }
            fresh.append(activity)
            events.append(event)
        }
        guard !events.isEmpty else {
            respond(.success(RoomEdgeChannelReportResponse()))
            return
        }
        let sequences = Set(events.map(\.channel)).map { sequencer.sequence(of: $0) }
        persist { try store.save(sequences: sequences) }
        // Owner presence keeps rooms open while their owner is in the channel.
        var presence: [RoomChange] = []
        for activity in fresh {
            switch activity.type {
            case .broadcasterJoined, .roleToBroadcaster, .audienceJoined:
                presence += registry.ownerPresence(channel: activity.channel, uid: activity.uid, present: true, nowMs: now)
            case .broadcasterLeft, .audienceLeft, .roleToAudience:
                presence += registry.ownerPresence(channel: activity.channel, uid: activity.uid, present: false, nowMs: now)
            default: break
            }
        }
        apply(presence, replicate: true)
        // The successors learn the numbers before anyone sees the events, so a successor taking over
        // never reuses a number.
        var batches: [String: RoomStateBatch] = [:]
        for sequence in sequences {
            for holder in holders(of: sequence.channel) where holder != selfID {
                batches[holder, default: RoomStateBatch()].sequences.append(sequence)
            }
        }
        send(batches) { [self] in
            for event in events {
                publisher.publish(topic: "channel/\(event.channel)", kind: .channelEvent, body: event)
                webhooks?.enqueue(event)
            }
            respond(.success(RoomEdgeChannelReportResponse()))
        }
    }

    /// Every channel the edges reported, with its room if this coordinator holds it.
    func listChannels() -> RoomListChannelsResponse {
        var answer = RoomListChannelsResponse()
        answer.coordinator = selfID
        answer.channels = RoomChannelStatus.naming(edgeChannels.values.flatMap { $0 }, after: registry.rooms.values)
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.edge < $1.edge }
        return answer
    }

    // MARK: - Kick and ban

    /// Bans a uid from a channel and has every alive edge enforce it now.
    func kick(_ request: WireEnvelope, _ respond: Node.Responder) {
        let now = Self.nowMs
        guard let ban = answering(respond, { () throws -> RoomBan in
            let body = try request.decodeBody(RoomKickRequest.self)
            guard !body.channel.isEmpty, body.uid != 0 else {
                throw ShowroomError.invalidArgument("a kick names a channel and a non-zero uid")
            }
            guard body.banSeconds <= 86_400 else {
                throw ShowroomError.invalidArgument("ban of \(body.banSeconds) s is over a day (86400 s)")
            }
            if let bad = body.privileges.first(where: { !(1...3).contains($0) }) {
                throw ShowroomError.invalidArgument("privilege \(bad) cannot be banned; use 1 (join), 2 (publish audio) or 3 (publish video)")
            }
            try verifyAdmin(body.admin, action: "kick", target: body.channel, uid: body.uid, nowMs: now)
            var fresh = RoomBan()
            fresh.channel = body.channel
            fresh.uid = body.uid
            fresh.privileges = body.privileges.isEmpty ? [1] : body.privileges
            // A kick without a ban still closes the connection: a ban that ends a second from now.
            fresh.untilMs = now + Int64(max(1, body.banSeconds)) * 1000
            return bans.add(fresh)
        }) else { return }
        persist { try store.save(bans: [ban]) }
        var batch = RoomStateBatch()
        batch.bans = [ban]
        sendToOtherCoordinators(batch)
        var enforce = RoomEdgeBansRequest()
        enforce.bans = [ban]
        let edges = alive(.edge)
        var remaining = edges.count
        var confirmed: UInt32 = 0
        let finish = {
            var answer = RoomKickResponse()
            answer.ban = ban
            answer.edges = confirmed
            respond(.success(answer))
        }
        guard remaining > 0 else {
            finish()
            return
        }
        for edge in edges {
            node.send(.edgeBans, body: enforce, to: edge.metadata.clusterEndpoint, timeout: Self.peerTimeout) { result in
                if case .success(let answer) = result, answer.failure == nil { confirmed += 1 }
                remaining -= 1
                if remaining == 0 { finish() }
            }
        }
    }
}
