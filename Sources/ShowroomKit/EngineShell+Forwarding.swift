internal import EdgeProtocol
internal import ShowroomWire

// Forwarding the broadcaster's tracks into other channels: the requests go to the edge of the
// source connection, which joins the destinations and reports their states as events.

extension EngineShell {
    /// Sends a forwarding request on a joined connection's session.
    func forward(
        _ operation: EdgeProtocol.ForwardOperation, _ connection: ChannelConnection?,
        _ complete: @escaping Completion<[ForwardDestinationStatus]>
    ) {
        do throws(ShowroomError) {
            let (record, serial) = try state.target(for: connection)
            guard let session = links[serial] else { throw .unavailable("the session with \(record.edgeEndpoint) is not open") }
            let channel = record.connection.channel
            send("forward", on: session, { id throws(ShowroomError) in
                try EdgeCodec.envelope(forward: channel, operation, id: id)
            }) { result in
                complete(result.flatMap { envelope in
                    Result { () throws(ShowroomError) in try EdgeCodec.forwardResponse(from: envelope).map(ForwardDestinationStatus.init) }
                })
            }
        } catch {
            complete(.failure(error))
        }
    }
}
