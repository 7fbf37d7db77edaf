import NodeRuntime
import Rooms
import ShowroomWire

// Recordings: the server API's requests, kept by the channel's owner; every recording order sent
// to every edge, which records the publishers that publish on it.

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
            return respond(Result { () throws(ShowroomError) in try serveRecording(body) }.outcome)
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
    /// edges at once.
    private func serveRecording(_ request: RoomRecordingRequest) throws(ShowroomError) -> RoomRecordingResponse {
        let now = nowMs
        var answer = RoomRecordingResponse()
        switch request.action {
        case .start(let start):
            let id = "rec-" + String(UInt64.random(in: 0 ... .max, using: &random) | 1 << 60, radix: 16)
            answer.recordings = [try machine.recordings.start(channel: request.channel, start, id: id, nowMs: now)]
            sendRecordingOrders()
        case .stop(let id):
            answer.recordings = [try machine.recordings.stop(channel: request.channel, id: id, nowMs: now)]
            sendRecordingOrders()
        case .get(let id):
            answer.recordings = [try machine.recordings.get(channel: request.channel, id: id)]
        case .list:
            answer.recordings = machine.recordings.list(channel: request.channel)
        case nil:
            throw .invalidArgument("a RECORDING request starts, stops, gets or lists recordings; it names none of these")
        }
        let recording = machine.records.directory.recordingUIDs(of: request.channel)
        for index in answer.recordings.indices where answer.recordings[index].stoppedMs == 0 {
            answer.recordings[index].recordingUids = recording
        }
        return answer
    }

    /// Sends every alive edge the recording orders when they changed or are due again.
    func sendRecordingOrders() {
        guard let orders = machine.recordingOrdersDue(rules: recordingRules) else { return }
        let request = RoomEdgeRecordingsRequest.with {
            $0.coordinator = selfID
            $0.orders = orders
            $0.version = machine.recordings.nextVersion(nowMs: nowMs)
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
