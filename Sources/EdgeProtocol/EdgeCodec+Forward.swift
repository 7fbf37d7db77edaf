import ShowroomWire

// Forwarding a broadcaster's tracks into other channels: START_FORWARD … RESUME_FORWARD (client
// requests), FORWARD_STATE_CHANGED (event), FORWARD_COMMAND (a coordinator's, internal).

extension EdgeCodec {
    /// The forwarding operation of a message kind, without its destinations.
    ///
    /// - Parameter kind: A message kind.
    /// - Returns: Whether `kind` is a client forwarding request.
    public static func isForwardRequest(_ kind: WireMessageKind) -> Bool {
        switch kind {
        case .startForward, .updateForward, .stopForward, .pauseForward, .resumeForward: true
        default: false
        }
    }

    /// Decodes a client's forwarding request (edge side), destinations checked
    /// (``ForwardLimits/validate(_:source:)``).
    ///
    /// - Parameter envelope: A request of kind `START_FORWARD` … `RESUME_FORWARD`.
    /// - Returns: The source channel and the operation.
    /// - Throws: `UNKNOWN_KIND`, `MALFORMED_MESSAGE`, `INVALID_ARGUMENT`, the forwarding codes.
    public static func forwardRequest(from envelope: WireEnvelope) throws(ShowroomError) -> (channel: String, operation: ForwardOperation) {
        switch envelope.kind {
        case .startForward, .updateForward:
            let body = try envelope.decodeBody(EdgeForwardRequest.self)
            try Names.validateChannel(body.channel)
            let destinations = try checked(body.destinations, source: body.channel)
            if envelope.kind == .startForward {
                guard !destinations.isEmpty else {
                    throw .invalidArgument("START_FORWARD needs 1-\(ForwardLimits.maxDestinations) destinations; got none")
                }
                return (body.channel, .start(destinations))
            }
            return (body.channel, .update(destinations))
        case .stopForward, .pauseForward, .resumeForward:
            let body = try envelope.decodeBody(EdgeForwardChannelRequest.self)
            try Names.validateChannel(body.channel)
            let operation: ForwardOperation = envelope.kind == .stopForward ? .stop : envelope.kind == .pauseForward ? .pause : .resume
            return (body.channel, operation)
        default:
            throw .unknownKind("\(envelope.kind) is not a forwarding request")
        }
    }

    /// Decodes a coordinator's `FORWARD_COMMAND` body, checked as a client's request.
    ///
    /// - Parameter body: The command.
    /// - Returns: The source channel, the uid and the operation.
    /// - Throws: `INVALID_ARGUMENT` (a channel name, a missing action or uid, …) and the
    ///   forwarding codes.
    public static func forwardCommand(_ body: EdgeForwardCommand) throws(ShowroomError) -> (channel: String, uid: UInt32, operation: ForwardOperation) {
        try Names.validateChannel(body.channel)
        guard body.uid != 0 else { throw .invalidArgument("FORWARD_COMMAND needs the uid of the broadcaster to forward") }
        let destinations = try checked(body.destinations, source: body.channel)
        let operation: ForwardOperation
        switch body.action {
        case .start:
            guard !destinations.isEmpty else {
                throw .invalidArgument("FORWARD_COMMAND start needs 1-\(ForwardLimits.maxDestinations) destinations; got none")
            }
            operation = .start(destinations)
        case .update: operation = .update(destinations)
        case .stop: operation = .stop
        case .pause: operation = .pause
        case .resume: operation = .resume
        default: throw .invalidArgument("FORWARD_COMMAND action \(body.action.rawValue) is none of start, update, stop, pause, resume")
        }
        return (body.channel, body.uid, operation)
    }

    /// The `FORWARD_COMMAND` body for an operation (a coordinator's side).
    public static func forwardCommand(channel: String, uid: UInt32, operation: ForwardOperation) -> EdgeForwardCommand {
        var body = EdgeForwardCommand()
        body.channel = channel
        body.uid = uid
        switch operation {
        case .start(let destinations):
            body.action = .start
            body.destinations = destinations.map(wire)
        case .update(let destinations):
            body.action = .update
            body.destinations = destinations.map(wire)
        case .stop: body.action = .stop
        case .pause: body.action = .pause
        case .resume: body.action = .resume
        }
        return body
    }

    private static func checked(_ wire: [EdgeForwardDestination], source: String) throws(ShowroomError) -> [ForwardDestination] {
        // Counted before anything is converted, so a huge list costs nothing more.
        guard wire.count <= ForwardLimits.maxDestinations else {
            throw ShowroomError(.forwardTooManyDestinations,
                "\(wire.count) destinations asked; a forward has at most \(ForwardLimits.maxDestinations)")
        }
        let destinations = wire.map { ForwardDestination(channel: $0.channel, token: $0.token) }
        try ForwardLimits.validate(destinations, source: source)
        return destinations
    }

    /// Encodes a forwarding request (client side).
    ///
    /// - Parameters:
    ///   - channel: The source channel.
    ///   - operation: What to do.
    ///   - requestID: The request's id.
    /// - Returns: The envelope.
    public static func envelope(forward channel: String, _ operation: ForwardOperation, id requestID: UInt64) throws(ShowroomError) -> WireEnvelope {
        switch operation {
        case .start(let destinations), .update(let destinations):
            var body = EdgeForwardRequest()
            body.channel = channel
            body.destinations = destinations.map(wire)
            let kind: WireMessageKind
            if case .start = operation { kind = .startForward } else { kind = .updateForward }
            return try WireEnvelope(request: kind, id: requestID, body: body)
        case .stop, .pause, .resume:
            var body = EdgeForwardChannelRequest()
            body.channel = channel
            let kind: WireMessageKind = operation == .stop ? .stopForward : operation == .pause ? .pauseForward : .resumeForward
            return try WireEnvelope(request: kind, id: requestID, body: body)
        }
    }

    /// The successful response to a forwarding request (edge side): the destinations after the
    /// change for start and update, the channel for the others.
    public static func forwardResponse(to request: WireEnvelope, channel: String, destinations: [ForwardDestinationStatus]) throws(ShowroomError) -> WireEnvelope {
        switch request.kind {
        case .startForward, .updateForward:
            var body = EdgeForwardResponse()
            body.channel = channel
            body.destinations = destinations.map(wire)
            return try WireEnvelope(responseTo: request, body: body)
        default:
            var body = EdgeForwardChannelResponse()
            body.channel = channel
            return try WireEnvelope(responseTo: request, body: body)
        }
    }

    /// Decodes the response to a forwarding request (client side).
    ///
    /// - Returns: The destinations (empty for stop, pause and resume).
    /// - Throws: The request's failure, or `MALFORMED_MESSAGE`.
    public static func forwardResponse(from envelope: WireEnvelope) throws(ShowroomError) -> [ForwardDestinationStatus] {
        if let failure = envelope.failure { throw failure }
        switch envelope.kind {
        case .startForward, .updateForward:
            return try envelope.decodeBody(EdgeForwardResponse.self).destinations.map(status)
        default:
            _ = try envelope.decodeBody(EdgeForwardChannelResponse.self)
            return []
        }
    }

    static func wire(_ destination: ForwardDestination) -> EdgeForwardDestination {
        var wire = EdgeForwardDestination()
        wire.channel = destination.channel
        wire.token = destination.token
        return wire
    }

    /// A destination's status on the wire.
    public static func wire(_ status: ForwardDestinationStatus) -> EdgeForwardDestinationStatus {
        var message = EdgeForwardDestinationStatus()
        message.channel = status.channel
        message.state = wire(status.state)
        message.reason = wire(status.reason)
        if let error = status.error { message.error = error.wire }
        message.edge = status.edge
        message.paused = status.paused
        return message
    }

    /// A destination's status from the wire; an unknown state reads as failure, an unknown
    /// reason as destination refused.
    public static func status(_ wire: EdgeForwardDestinationStatus) -> ForwardDestinationStatus {
        ForwardDestinationStatus(
            channel: wire.channel, state: forwardState(wire.state), reason: forwardReason(wire.reason),
            error: wire.hasError ? ShowroomError(wire: wire.error) : nil, edge: wire.edge, paused: wire.paused)
    }

    static func wire(_ change: ForwardStateChange) -> EdgeForwardStateChanged {
        var body = EdgeForwardStateChanged()
        body.channel = change.channel
        body.uid = change.uid
        body.destination = wire(change.destination)
        return body
    }

    static func forwardStateChange(_ body: EdgeForwardStateChanged) -> ForwardStateChange {
        ForwardStateChange(channel: body.channel, uid: body.uid, destination: status(body.destination))
    }

    static func wire(_ state: ForwardState) -> EdgeForwardState {
        switch state {
        case .idle: .idle
        case .connecting: .connecting
        case .running: .running
        case .failure: .failure
        }
    }

    static func forwardState(_ wire: EdgeForwardState) -> ForwardState {
        switch wire {
        case .idle: .idle
        case .connecting: .connecting
        case .running: .running
        default: .failure
        }
    }

    static func wire(_ reason: ForwardStateReason) -> EdgeForwardStateReason {
        switch reason {
        case .started: .started
        case .joined: .joined
        case .stopped: .stopped
        case .removed: .removed
        case .invalidToken: .invalidToken
        case .destinationUnreachable: .destinationUnreachable
        case .sourceLeft: .sourceLeft
        case .sameUIDInDestination: .sameUidInDestination
        case .destinationRefused: .destinationRefused
        case .tokenExpired: .tokenExpired
        case .paused: .paused
        case .resumed: .resumed
        case .tokenUpdated: .tokenUpdated
        case .retrying: .retrying
        }
    }

    static func forwardReason(_ wire: EdgeForwardStateReason) -> ForwardStateReason {
        ForwardStateReason.allCases.first { Self.wire($0) == wire } ?? .destinationRefused
    }
}
