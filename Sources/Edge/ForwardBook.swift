import ShowroomWire

/// The forwards an edge runs, as a pure state machine: for each forwarded broadcaster (a
/// ``ForwardKey``) up to four destination channels, each idle, connecting, running or in failure
/// with the vendors' reasons (`startForwardStreamToRooms`, Agora's channel media relay).
///
/// A value type with no I/O and no clock: the edge's shell calls one entry point per client
/// request, placement answer, join answer, link event or timer tick, passing the time, and carries
/// out the ``ForwardDirective``s returned: placements to ask, joins and leaves on the links to
/// destination edges, state changes to tell the broadcaster, keyframe requests to its publisher.
///
/// - Every destination change is one ``ForwardDirective/notify(_:_:)`` (one
///   `FORWARD_STATE_CHANGED` per destination state change).
/// - Starts and updates are rate-limited per forward (``ForwardSettings/maxChangesPerSecond``).
/// - An unreachable destination (placement or link failed, its edge died) is placed again every
///   ``ForwardSettings/retryInterval``, avoiding the edge that failed, up to
///   ``ForwardSettings/maxRetries`` times; refusals (a bad token, a ban) are final.
/// - Keyframe requests from any number of destinations reach the publisher at most once per
///   ``ForwardSettings/keyframeRequestInterval``; one asked for within the interval is sent when
///   it ends.
/// - The broadcaster leaving the source channel (``sourceLeft(_:now:)``) ends the forward.
public struct ForwardBook: Sendable {
    /// The settings it runs with.
    public let settings: ForwardSettings
    private var forwards: [ForwardKey: Forward] = [:]
    /// Times of recent starts and updates per forward, for the rate limit.
    private var changes: [ForwardKey: [Duration]] = [:]
    private var lastAttempt: UInt64 = 0

    struct Destination: Sendable {
        var token: String
        var state: ForwardState
        var reason: ForwardStateReason
        var error: ShowroomError?
        /// The edge it was placed on, once known.
        var edge: ForwardEdge?
        /// Placements and joins carry it back; an answer for an older attempt is ignored.
        var attempt: UInt64
        var retries = 0
        var redirects = 0
        var retryAt: Duration?
        var unreachableEdge: String?
    }

    struct Forward: Sendable {
        var session: SessionID
        var paused = false
        var order: [String] = []
        var destinations: [String: Destination] = [:]
        /// The running destinations, kept for the frame path.
        var targets: [ForwardTarget] = []
        var lastKeyframeRequest: Duration?
        var keyframePending = false
    }

    /// Creates an empty book.
    public init(settings: ForwardSettings = ForwardSettings()) {
        self.settings = settings
    }

    // MARK: - Reading

    /// True when no forward runs (the frame path looks no further).
    public var isEmpty: Bool { forwards.isEmpty }

    /// The forwards, sorted by channel and uid.
    public var keys: [ForwardKey] {
        forwards.keys.sorted { ($0.channel, $0.uid) < ($1.channel, $1.uid) }
    }

    /// Where a publisher's frames go: its session and the running destinations; `nil` when it is
    /// not forwarded, paused, or no destination runs.
    public func targets(channel: String, uid: UInt32) -> (session: SessionID, targets: [ForwardTarget])? {
        guard let forward = forwards[ForwardKey(channel: channel, uid: uid)], !forward.paused, !forward.targets.isEmpty else { return nil }
        return (forward.session, forward.targets)
    }

    /// A forward's destinations, in the order they were added; empty if it does not run.
    public func statuses(_ key: ForwardKey) -> [ForwardDestinationStatus] {
        guard let forward = forwards[key] else { return [] }
        return forward.order.map { status(forward, $0) }
    }

    /// Whether the forward is paused.
    public func isPaused(_ key: ForwardKey) -> Bool { forwards[key]?.paused ?? false }

    /// The forwards as the status view and the channel summaries list them.
    public var publishers: [EdgeForwardedPublisher] {
        keys.map { key in
            var publisher = EdgeForwardedPublisher()
            publisher.channel = key.channel
            publisher.uid = key.uid
            publisher.paused = isPaused(key)
            publisher.destinations = statuses(key).map(EdgeCodec.wire)
            return publisher
        }
    }

    /// The forward a session may control in a channel it is connected to as `uid` with `role`
    /// (its session's `clientID`): its own uid there. Stopping is allowed whatever the role;
    /// starting needs a broadcaster; a forwarded user is not forwarded again.
    public func sourceKey(channel: String, uid: UInt32, role: ClientRole, clientID: String) throws(ShowroomError) -> ForwardKey {
        let key = ForwardKey(channel: channel, uid: uid)
        guard role == .broadcaster || forwards[key] != nil else {
            throw .roleForbidsPublish("uid \(uid) is audience in channel '\(channel)'; only a broadcaster's tracks are forwarded")
        }
        if ForwardLinkIdentity.isLink(clientID: clientID) {
            throw .permissionDenied("a forwarded user is not forwarded again; forward from the source channel's edge")
        }
        return key
    }

    /// The forward a running destination on `edge` belongs to, for a link's events.
    public func session(of key: ForwardKey) -> SessionID? { forwards[key]?.session }

    private func status(_ forward: Forward, _ channel: String) -> ForwardDestinationStatus {
        let destination = forward.destinations[channel]!
        return ForwardDestinationStatus(
            channel: channel, state: destination.state, reason: destination.reason, error: destination.error,
            edge: destination.edge?.id ?? "", paused: forward.paused)
    }

    // MARK: - Requests

    /// Applies a start, update, pause, resume or stop from the broadcaster (or a coordinator on
    /// its behalf). The destinations are checked already (``ForwardLimits/validate(_:source:)``).
    ///
    /// - Parameters:
    ///   - operation: What to do.
    ///   - key: The forward.
    ///   - session: The broadcaster's session (told of every state change).
    ///   - now: The current clock value.
    ///   - out: Receives the directives.
    /// - Returns: The destinations after the change.
    /// - Throws: `FORWARD_ALREADY_STARTED`, `FORWARD_NOT_STARTED`, `FORWARD_UPDATE_TOO_FREQUENT`,
    ///   `FORWARD_TOO_MANY_DESTINATIONS`; nothing changed then.
    public mutating func apply(
        _ operation: ForwardOperation, to key: ForwardKey, from session: SessionID, now: Duration, _ out: inout [ForwardDirective]
    ) throws(ShowroomError) -> [ForwardDestinationStatus] {
        switch operation {
        case .start(let destinations):
            guard forwards[key] == nil else {
                throw ShowroomError(.forwardAlreadyStarted, "\(key) is forwarded already; update its destinations instead")
            }
            try checkCount(destinations)
            try countChange(key, now: now)
            var forward = Forward(session: session)
            for destination in destinations { add(destination, reason: .started, key, &forward, &out) }
            forwards[key] = forward
        case .update(let destinations):
            guard var forward = forwards[key] else { throw notStarted(key) }
            try checkCount(destinations)
            try countChange(key, now: now)
            forward.session = session
            let wanted = Dictionary(destinations.map { ($0.channel, $0.token) }) { first, _ in first }
            for channel in forward.order where wanted[channel] == nil {
                end(channel, reason: .removed, key, &forward, &out)
            }
            for destination in destinations {
                guard let current = forward.destinations[destination.channel] else {
                    add(destination, reason: .started, key, &forward, &out)
                    continue
                }
                guard current.token != destination.token else { continue }
                if let edge = current.edge, current.state == .connecting || current.state == .running {
                    out.append(.leave(key, destination: destination.channel, on: edge))
                }
                forward.destinations[destination.channel]!.token = destination.token
                connect(destination.channel, reason: .tokenUpdated, unreachableEdge: nil, key, &forward, &out)
            }
            rebuildTargets(&forward)
            forwards[key] = forward
        case .stop:
            guard var forward = forwards.removeValue(forKey: key) else { throw notStarted(key) }
            for channel in forward.order { end(channel, reason: .stopped, key, &forward, &out) }
            return []
        case .pause, .resume:
            guard var forward = forwards[key] else { throw notStarted(key) }
            let pause = operation == .pause
            if forward.paused != pause {
                forward.paused = pause
                for channel in forward.order {
                    forward.destinations[channel]!.reason = pause ? .paused : .resumed
                    out.append(.notify(forward.session, ForwardStateChange(channel: key.channel, uid: key.uid, destination: status(forward, channel))))
                }
            }
            forwards[key] = forward
            // Destinations get decodable video at once on resume.
            if !pause { keyframeWanted(key, now: now, &out) }
        }
        return statuses(key)
    }

    private func notStarted(_ key: ForwardKey) -> ShowroomError {
        ShowroomError(.forwardNotStarted, "\(key) is not forwarded; start forwarding first")
    }

    private func checkCount(_ destinations: [ForwardDestination]) throws(ShowroomError) {
        guard destinations.count <= ForwardLimits.maxDestinations else {
            throw ShowroomError(.forwardTooManyDestinations,
                "\(destinations.count) destinations asked; a forward has at most \(ForwardLimits.maxDestinations)")
        }
    }

    /// Counts a start or update, refusing it beyond the rate limit.
    private mutating func countChange(_ key: ForwardKey, now: Duration) throws(ShowroomError) {
        var times = changes[key, default: []]
        times.removeAll { now - $0 >= .seconds(1) }
        guard times.count < settings.maxChangesPerSecond else {
            changes[key] = times
            throw ShowroomError(.forwardUpdateTooFrequent,
                "\(key) was started or updated \(times.count) times in the last second (at most \(settings.maxChangesPerSecond)); nothing changed, send the complete destination set again in a moment")
        }
        times.append(now)
        changes[key] = times
    }

    private mutating func add(_ destination: ForwardDestination, reason: ForwardStateReason, _ key: ForwardKey, _ forward: inout Forward, _ out: inout [ForwardDirective]) {
        forward.order.append(destination.channel)
        forward.destinations[destination.channel] = Destination(token: destination.token, state: .connecting, reason: reason, attempt: 0)
        connect(destination.channel, reason: reason, unreachableEdge: nil, key, &forward, &out)
    }

    /// Starts placing a destination afresh: connecting, a new attempt.
    private mutating func connect(
        _ channel: String, reason: ForwardStateReason, unreachableEdge: String?, _ key: ForwardKey, _ forward: inout Forward,
        _ out: inout [ForwardDirective]
    ) {
        lastAttempt += 1
        var destination = forward.destinations[channel]!
        destination.state = .connecting
        destination.reason = reason
        destination.error = nil
        destination.edge = nil
        destination.attempt = lastAttempt
        destination.redirects = 0
        destination.retryAt = nil
        forward.destinations[channel] = destination
        out.append(.notify(forward.session, ForwardStateChange(channel: key.channel, uid: key.uid, destination: status(forward, channel))))
        out.append(.place(key, destination: channel, token: destination.token, attempt: lastAttempt, unreachableEdge: unreachableEdge))
    }

    /// Ends a destination: idle with `reason`, left if it was joined or being joined, forgotten.
    private func end(_ channel: String, reason: ForwardStateReason, _ key: ForwardKey, _ forward: inout Forward, _ out: inout [ForwardDirective]) {
        guard var destination = forward.destinations[channel] else { return }
        if let edge = destination.edge, destination.state == .connecting || destination.state == .running {
            out.append(.leave(key, destination: channel, on: edge))
        }
        destination.state = .idle
        destination.reason = reason
        destination.error = nil
        forward.destinations[channel] = destination
        out.append(.notify(forward.session, ForwardStateChange(channel: key.channel, uid: key.uid, destination: status(forward, channel))))
        forward.destinations[channel] = nil
        forward.order.removeAll { $0 == channel }
    }

    // MARK: - Answers and events

    /// A coordinator's answer to ``ForwardDirective/place(_:destination:token:attempt:unreachableEdge:)``.
    public mutating func placed(
        _ key: ForwardKey, destination channel: String, attempt: UInt64, _ result: Result<ForwardEdge, ShowroomError>, now: Duration
    ) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        guard var forward = forwards[key], let destination = forward.destinations[channel], destination.attempt == attempt,
            destination.state == .connecting
        else { return out }
        switch result {
        case .success(let edge):
            forward.destinations[channel]!.edge = edge
            out.append(.join(key, destination: channel, token: destination.token, on: edge, attempt: attempt))
        case .failure(let error):
            fail(channel, error, key, &forward, now: now, &out)
        }
        forwards[key] = forward
        return out
    }

    /// A destination edge's answer to ``ForwardDirective/join(_:destination:token:on:attempt:)``.
    public mutating func joined(
        _ key: ForwardKey, destination channel: String, attempt: UInt64, _ result: Result<Void, ShowroomError>, now: Duration
    ) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        guard var forward = forwards[key], var destination = forward.destinations[channel], destination.attempt == attempt,
            destination.state == .connecting
        else { return out }
        switch result {
        case .success:
            destination.state = .running
            destination.reason = .joined
            destination.error = nil
            destination.retries = 0
            destination.unreachableEdge = nil
            forward.destinations[channel] = destination
            rebuildTargets(&forward)
            out.append(.notify(forward.session, ForwardStateChange(channel: key.channel, uid: key.uid, destination: status(forward, channel))))
            forwards[key] = forward
            // The destination's viewers need a keyframe to start decoding.
            keyframeWanted(key, now: now, &out)
            return out
        case .failure(let error):
            if error.code == .channelElsewhere, let redirect = error.redirect, !redirect.clientEndpoint.isEmpty,
                destination.redirects < settings.maxRedirects
            {
                let edge = ForwardEdge(id: redirect.edgeID, endpoint: redirect.clientEndpoint, curvePublicKey: redirect.clientCurvePublicKey)
                destination.redirects += 1
                destination.edge = edge
                forward.destinations[channel] = destination
                out.append(.join(key, destination: channel, token: destination.token, on: edge, attempt: attempt))
            } else {
                fail(channel, error, key, &forward, now: now, &out)
            }
        }
        forwards[key] = forward
        return out
    }

    /// The destination edge closed a forwarded connection (`CHANNEL_CONNECTION_CLOSED` on the
    /// link): the same uid joined there, the token ran out, a ban.
    public mutating func closed(_ key: ForwardKey, destination channel: String, on edge: ForwardEdge, _ error: ShowroomError, now: Duration) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        guard var forward = forwards[key], let destination = forward.destinations[channel], destination.edge == edge,
            destination.state == .running || destination.state == .connecting
        else { return out }
        fail(channel, error, key, &forward, now: now, &out)
        forwards[key] = forward
        return out
    }

    /// The link to `edge` broke (its socket monitor saw the connection drop, the edge went silent
    /// or closed the session, the membership declared it dead): its destinations are unreachable
    /// and placed again after ``ForwardSettings/retryInterval``.
    public mutating func linkDown(_ key: ForwardKey, edge: ForwardEdge, _ error: ShowroomError, now: Duration) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        guard var forward = forwards[key] else { return out }
        for channel in forward.order {
            let destination = forward.destinations[channel]!
            guard destination.edge == edge, destination.state == .running || destination.state == .connecting else { continue }
            let unreachable = ShowroomError(.forwardDestinationUnreachable,
                "edge \(edge.id) hosting '\(channel)' is unreachable (\(error.code)); placing the channel again every \(settings.retryInterval)")
            fail(channel, unreachable, key, &forward, now: now, &out)
        }
        forwards[key] = forward
        return out
    }

    /// A channel activity of the plane: a broadcaster that left or became audience ends its
    /// forward there (``sourceLeft(_:now:)``).
    public mutating func activity(_ activity: ChannelActivity, now: Duration) -> [ForwardDirective] {
        switch activity.kind {
        case .broadcasterLeft, .roleToAudience: sourceLeft(ForwardKey(channel: activity.channel, uid: activity.uid), now: now)
        default: []
        }
    }

    /// The broadcaster left the source channel, became audience or lost its session: every
    /// destination goes idle (source left) and the forward ends.
    public mutating func sourceLeft(_ key: ForwardKey, now: Duration) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        guard var forward = forwards.removeValue(forKey: key) else { return out }
        changes[key] = nil
        for channel in forward.order { end(channel, reason: .sourceLeft, key, &forward, &out) }
        return out
    }

    /// A destination edge asked for a keyframe of the forwarded video (one of its viewers needs
    /// one): passed on to the publisher at most once per ``ForwardSettings/keyframeRequestInterval``.
    public mutating func keyframeWanted(_ key: ForwardKey, now: Duration) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        keyframeWanted(key, now: now, &out)
        return out
    }

    private mutating func keyframeWanted(_ key: ForwardKey, now: Duration, _ out: inout [ForwardDirective]) {
        guard var forward = forwards[key] else { return }
        if let last = forward.lastKeyframeRequest, now - last < settings.keyframeRequestInterval {
            forward.keyframePending = true
        } else {
            forward.lastKeyframeRequest = now
            forward.keyframePending = false
            out.append(.requestKeyframe(TrackID(channel: key.channel, uid: key.uid, kind: .video), from: forward.session))
        }
        forwards[key] = forward
    }

    /// The timer: retries that are due, keyframe requests held back by the interval.
    public mutating func tick(now: Duration) -> [ForwardDirective] {
        var out: [ForwardDirective] = []
        guard !forwards.isEmpty || !changes.isEmpty else { return out }
        for key in keys {
            var forward = forwards[key]!
            for channel in forward.order {
                let destination = forward.destinations[channel]!
                guard destination.state == .failure, let due = destination.retryAt, due <= now else { continue }
                connect(channel, reason: .retrying, unreachableEdge: destination.unreachableEdge, key, &forward, &out)
            }
            forwards[key] = forward
            if forward.keyframePending, let last = forward.lastKeyframeRequest, now - last >= settings.keyframeRequestInterval {
                keyframeWanted(key, now: now, &out)
            }
        }
        changes = changes.filter { _, times in times.contains { now - $0 < .seconds(1) } }
        return out
    }

    // MARK: - Failures

    /// A destination fails: its reason from the error, a retry scheduled if it was unreachable.
    private mutating func fail(_ channel: String, _ error: ShowroomError, _ key: ForwardKey, _ forward: inout Forward, now: Duration, _ out: inout [ForwardDirective]) {
        var destination = forward.destinations[channel]!
        let reason = Self.reason(for: error)
        destination.state = .failure
        destination.reason = reason
        destination.error = error
        destination.retryAt = nil
        if reason == .destinationUnreachable {
            destination.unreachableEdge = destination.edge?.id ?? destination.unreachableEdge
            if destination.retries < settings.maxRetries {
                destination.retries += 1
                destination.retryAt = now + settings.retryInterval
            }
        } else if error.code == .notOnStage, destination.retries < settings.maxRetries {
            // A PK's forward may reach the peer room's edge just before the room's new stage
            // (which seats the forwarded host) does: ask again shortly.
            destination.retries += 1
            destination.retryAt = now + settings.stageRetryInterval
        }
        forward.destinations[channel] = destination
        rebuildTargets(&forward)
        out.append(.notify(forward.session, ForwardStateChange(channel: key.channel, uid: key.uid, destination: status(forward, channel))))
    }

    /// The vendors' reason for an error from a placement, a join or the destination edge.
    static func reason(for error: ShowroomError) -> ForwardStateReason {
        switch error.code {
        case .tokenMalformed, .tokenBadSignature, .tokenWrongAppID, .tokenExpired, .tokenChannelMismatch, .tokenUidMismatch,
             .tokenMissingPrivilege, .channelPrivate:
            return .invalidToken
        case .privilegeExpired:
            return .tokenExpired
        case .uidReplaced, .forwardSameUidInDestination:
            return .sameUIDInDestination
        case .unavailable, .deadlineExceeded, .noEdgeAvailable, .noCoordinator, .forwardDestinationUnreachable,
             .sessionTimedOut, .sessionReplaced, .noSession, .channelElsewhere:
            return .destinationUnreachable
        default:
            return .destinationRefused
        }
    }

    private func rebuildTargets(_ forward: inout Forward) {
        forward.targets = forward.order.compactMap { channel in
            let destination = forward.destinations[channel]!
            guard destination.state == .running, let edge = destination.edge else { return nil }
            return ForwardTarget(channel: channel, edge: edge)
        }
    }
}
