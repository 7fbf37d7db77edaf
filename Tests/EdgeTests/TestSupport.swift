import Edge
import ShowroomWire
import XCTest

/// A frame as the tests forward it: which track, which number, keyframe or not.
struct TestFrame: Hashable, Sendable, CustomStringConvertible {
    var uid: UInt32
    var kind: TrackKind
    var number: Int
    var isKeyframe: Bool

    var description: String { "\(kind == .video ? "v" : "a")\(uid)#\(number)\(isKeyframe ? "K" : "")" }
}

/// A plane driven by hand, with a fake clock and a fake network: it records every frame sent
/// and carries out GOP-cache flushes the way the shell does.
struct TestEdge {
    var plane: ChannelPlane<TestFrame>
    var now: Duration = .zero
    /// Frames delivered, in order.
    var delivered: [(to: SessionID, frame: TestFrame)] = []
    /// Sessions whose queue is full.
    var blocked: Set<SessionID> = []
    /// Sessions that are gone.
    var gone: Set<SessionID> = []
    /// Channel activities reported, in order (``run(_:)`` takes them out of the directives).
    var activities: [ChannelActivity] = []
    private var nextRequestID: UInt64 = 0
    private var frameNumbers: [String: Int] = [:]

    init(settings: EdgeSettings = EdgeSettings()) {
        plane = ChannelPlane(settings: settings)
    }

    /// Carries out the directives like the shell: GOP-cache flushes happen at once (their own
    /// directives are spliced in after them). Returns everything, in order, without log lines and
    /// channel activities (those go to ``activities``).
    mutating func run(_ directives: [EdgeDirective]) -> [EdgeDirective] {
        var out: [EdgeDirective] = []
        for directive in directives {
            if case .log = directive { continue }
            if case .report(let activity) = directive {
                activities.append(activity)
                continue
            }
            out.append(directive)
            if case .sendCachedFrames(let track, let session) = directive {
                var sent: [(SessionID, TestFrame)] = []
                let blocked = self.blocked
                let gone = self.gone
                let more = plane.sendCachedFrames(track, to: session, now: now) { to, frame in
                    if gone.contains(to) { return .unreachable }
                    if blocked.contains(to) { return .wouldBlock }
                    sent.append((to, frame))
                    return .sent
                }
                delivered += sent.map { (to: $0.0, frame: $0.1) }
                out += run(more)
            }
        }
        return out
    }

    mutating func requestID() -> UInt64 {
        nextRequestID += 1
        return nextRequestID
    }

    @discardableResult
    mutating func open(_ session: SessionID, client: String? = nil) -> [EdgeDirective] {
        run(plane.openSession(session, requestID: requestID(), clientID: client ?? "client-\(session.rawValue)", sdkVersion: "test", now: now))
    }

    @discardableResult
    mutating func join(
        _ session: SessionID, _ channel: String, uid: UInt32, as role: ClientRole, options: MediaOptions? = nil,
        grant: ChannelGrant? = nil
    ) -> [EdgeDirective] {
        let grant = grant ?? (role == .broadcaster ? .publisher() : .subscriber())
        return run(plane.join(session, requestID: requestID(), channel: channel, uid: uid, role: role,
                              options: options ?? .defaults(for: role), grant: grant, now: now))
    }

    /// Publishes the next frame of a track (numbered per track).
    @discardableResult
    mutating func publish(
        _ session: SessionID, _ channel: String, uid: UInt32, _ kind: TrackKind, key: Bool = false,
        level: UInt8 = 0, size: Int = 1000
    ) -> [EdgeDirective] {
        let name = "\(channel)/\(uid)/\(kind)"
        frameNumbers[name, default: 0] += 1
        let frame = TestFrame(uid: uid, kind: kind, number: frameNumbers[name]!, isKeyframe: key)
        let info = MediaFrameInfo(channel: channel, publisherUID: uid, kind: kind, isKeyframe: key, audioLevel: level, payloadSize: size)
        var sent: [(SessionID, TestFrame)] = []
        let blocked = self.blocked
        let gone = self.gone
        let directives = plane.forward(frame, info: info, from: session, now: now) { to, frame in
            if gone.contains(to) { return .unreachable }
            if blocked.contains(to) { return .wouldBlock }
            sent.append((to, frame))
            return .sent
        }
        delivered += sent.map { (to: $0.0, frame: $0.1) }
        return run(directives)
    }

    /// Advances the clock, ticking every 10 ms; returns everything the ticks produced.
    @discardableResult
    mutating func advance(
        by duration: Duration, step: Duration = .milliseconds(10), alive: [SessionID] = []
    ) -> [(at: Duration, directive: EdgeDirective)] {
        var out: [(Duration, EdgeDirective)] = []
        let end = now + duration
        while now < end {
            now = min(now + step, end)
            for session in alive { _ = plane.heartbeat(session, now: now) }
            out += run(plane.tick(now: now)).map { (now, $0) }
        }
        return out
    }

    /// Keeps sessions alive (a heartbeat each).
    mutating func heartbeat(_ sessions: SessionID...) {
        for session in sessions { _ = plane.heartbeat(session, now: now) }
    }

    /// Frames delivered to `session` since `start` (an index into `delivered`).
    func frames(to session: SessionID, from start: Int = 0) -> [TestFrame] {
        delivered[start...].filter { $0.to == session }.map(\.frame)
    }
}

// MARK: - Reading directives

extension Array where Element == EdgeDirective {
    func events(to session: SessionID) -> [EdgeEvent] {
        compactMap { if case .send(let event, let to) = $0, to == session { event } else { nil } }
    }

    var events: [EdgeEvent] {
        compactMap { if case .send(let event, _) = $0 { event } else { nil } }
    }

    func replies(to session: SessionID) -> [EdgeReply] {
        compactMap { if case .reply(let reply, let to) = $0, to == session { reply } else { nil } }
    }

    var replies: [EdgeReply] {
        compactMap { if case .reply(let reply, _) = $0 { reply } else { nil } }
    }

    var failure: ShowroomError? { replies.first?.failure }

    var keyframeRequests: [TrackID] {
        compactMap { if case .requestKeyframe(let track, _) = $0 { track } else { nil } }
    }

    var closedSessions: [SessionID] {
        compactMap { if case .closeSession(let session) = $0 { session } else { nil } }
    }

    /// Recipients of an event, in order.
    func recipients(of event: EdgeEvent) -> [SessionID] {
        compactMap { if case .send(let e, let to) = $0, e == event { to } else { nil } }
    }
}

extension Array where Element == (at: Duration, directive: EdgeDirective) {
    var directives: [EdgeDirective] { map(\.directive) }
}

extension Array where Element == EdgeEvent {
    var errorCodes: [ShowroomError.Code] {
        compactMap { if case .error(let error, _, _) = $0 { error.code } else { nil } }
    }
}

let host = SessionID(1)
let viewer1 = SessionID(2)
let viewer2 = SessionID(3)
let viewer3 = SessionID(4)
let guest = SessionID(5)

func video(_ channel: String, _ uid: UInt32) -> TrackID { TrackID(channel: channel, uid: uid, kind: .video) }
func audio(_ channel: String, _ uid: UInt32) -> TrackID { TrackID(channel: channel, uid: uid, kind: .audio) }

extension EdgeEvent {
    /// The code of a session-closed, connection-closed or error event.
    var code: ShowroomError.Code? {
        switch self {
        case .sessionClosed(let reason): reason.code
        case .connectionClosed(_, let reason): reason.code
        case .error(let error, _, _): error.code
        default: nil
        }
    }

    /// The message of a session-closed, connection-closed or error event.
    var message: String? {
        switch self {
        case .sessionClosed(let reason): reason.message
        case .connectionClosed(_, let reason): reason.message
        case .error(let error, _, _): error.message
        default: nil
        }
    }
}
