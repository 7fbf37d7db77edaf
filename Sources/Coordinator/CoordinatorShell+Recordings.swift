import NodeRuntime
import Rooms
import ShowroomWire

// Recordings: the server API's requests, served by the channel's owner and held by every
// coordinator; every recording order sent to every edge, which records the publishers that
// publish on it.

extension CoordinatorShell {
    /// `RECORDING` (the server API): served by the channel's owner, passed there by any other.
    func routeRecordingRequest(_ request: WireEnvelope, _ respond: Node.Responder) {
        let body: RoomRecordingRequest
        do {
            body = try request.decodeBody(RoomRecordingRequest.self)
            try Names.validateChannel(body.channel)
        } catch {
            respond(.failure(error))
            return
        }
        let owner = ownership.owner(of: body.channel)
        guard owner != selfID, !request.forwarded, let endpoint = clusterEndpoint(of: owner) else {
            let served: (answer: RoomRecordingResponse, changed: RoomRecording?)
            do {
                served = try serveRecording(body)
            } catch {
                return respond(.failure(error))
            }
            // A start or stop is answered once every other coordinator holds it: the channel's
            // next owner goes on with it.
            guard let changed = served.changed else { return respond(.success(served.answer)) }
            return replicate([changed]) { respond(.success(served.answer)) }
        }
        node.forward(request, to: endpoint, timeout: Self.peerTimeout) { result in
            switch result {
            case .success(let answer): respond(.relayed(answer))
            case .failure(let error):
                respond(.failure(.unavailable(
                    "the coordinator owning channel \(body.channel) (\(owner)) did not answer (\(error.message)); retry in a moment")))
            }
        }
    }

    /// Starts, stops, gets or lists the channel's recordings here; a start or stop reaches the
    /// edges at once, and is returned as `changed` to replicate.
    private func serveRecording(_ request: RoomRecordingRequest) throws(ShowroomError) -> (answer: RoomRecordingResponse, changed: RoomRecording?) {
        let now = nowMs
        var answer = RoomRecordingResponse()
        var changed: RoomRecording?
        switch request.action {
        case .start(let start):
            let id = "rec-" + String(UInt64.random(in: 0 ... .max, using: &random) | 1 << 60, radix: 16)
            let recording = try machine.records.recordings.start(channel: request.channel, start, id: id, nowMs: now)
            changed = recording
            answer.recordings = [recording]
            sendRecordingOrders()
        case .stop(let id):
            let recording = try machine.records.recordings.stop(channel: request.channel, id: id, nowMs: now)
            changed = recording
            answer.recordings = [recording]
            sendRecordingOrders()
        case .get(let id):
            answer.recordings = [try machine.records.recordings.get(channel: request.channel, id: id)]
        case .list:
            answer.recordings = machine.records.recordings.list(channel: request.channel)
        case nil:
            throw .invalidArgument("a RECORDING request starts, stops, gets or lists recordings; it names none of these")
        }
        let recording = machine.records.directory.recordingUIDs(of: request.channel)
        for index in answer.recordings.indices where answer.recordings[index].stoppedMs == 0 {
            answer.recordings[index].recordingUids = recording
        }
        return (answer, changed)
    }

    /// Has every other coordinator hold `recordings` (``CoordinatorRecords/recordings``).
    func replicate(_ recordings: [RoomRecording], then done: (() -> Void)? = nil) {
        var batch = RoomStateBatch()
        batch.recordings = recordings
        replicateClusterWide(batch, then: done)
    }

    /// Sends every alive edge the recording orders when they changed or are due again.
    func sendRecordingOrders() {
        guard let orders = machine.recordingOrdersDue(rules: recordingRules) else { return }
        let request = RoomEdgeRecordingsRequest.with {
            $0.coordinator = selfID
            $0.orders = orders
            $0.version = machine.records.recordings.nextVersion(nowMs: nowMs)
        }
        for edge in alive(.edge) where !edge.metadata.clusterEndpoint.isEmpty {
            node.send(.edgeRecordings, body: request, to: edge.metadata.clusterEndpoint, timeout: Self.peerTimeout) { [logger] result in
                if let refusal = result.refusal {
                    // The next refresh sends them again.
                    logger.debug("edge \(edge.nodeID) did not take \(orders.count) recording orders: \(refusal)")
                }
            }
        }
    }
}
