import NodeRuntime
import Rooms
import ShowroomWire

// Recordings: the server API's requests, served by the channel's owner and held by every
// coordinator; every recording order sent to every edge, which records the publishers that
// publish on it.

extension CoordinatorShell {
    /// `RECORDING` (the server API): served by the channel's owner, passed there by any other.
    func routeRecordingRequest(_ request: WireEnvelope, _ respond: Node.Responder) {
        guard let body = respond.answering({ () throws -> RoomRecordingRequest in
            let body = try request.decodeBody(RoomRecordingRequest.self)
            try Names.validateChannel(body.channel)
            return body
        }) else { return }
        atChannelOwner(request, channel: body.channel, respond, ownerFailed: { owner, error in
            respond(.failure(.unavailable(
                "the coordinator owning channel \(body.channel) (\(owner)) did not answer (\(error.message)); retry in a moment")))
        }) { [self] in serveRecording(body, respond) }
    }

    /// Serves a recording request here (``CoordinatorNode/serveRecording(_:nowMs:using:)``): a
    /// start or stop reaches the edges at once, and is answered once every other coordinator
    /// holds it (the channel's next owner goes on with it).
    private func serveRecording(_ body: RoomRecordingRequest, _ respond: Node.Responder) {
        let served: (answer: RoomRecordingResponse, changed: RoomRecording?)
        do {
            served = try machine.serveRecording(body, nowMs: nowMs, using: &random)
        } catch {
            return respond(.failure(error))
        }
        guard let changed = served.changed else { return respond(.success(served.answer)) }
        sendRecordingOrders()
        replicate([changed]) { respond(.success(served.answer)) }
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
        tellEdges(.edgeRecordings, request, what: "\(orders.count) recording orders")
    }
}
