import Foundation
import ShowroomKit
import Synchronization

/// What one viewer decoded, by channel and publisher: the time of the last picture, and the
/// pictures since the observers last looked (taken by ``take()``).
public final class Sightings: Sendable {
    public struct Key: Hashable, Sendable {
        public var channel: String
        public var uid: UInt32
    }

    /// Pictures of one publisher since the last look.
    public struct Seen: Sendable {
        public var first: ContinuousClock.Instant
        public var last: ContinuousClock.Instant
        public var count: Int
    }

    private struct State {
        var last: [Key: ContinuousClock.Instant] = [:]
        var fresh: [Key: Seen] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func record(channel: String, uid: UInt32) {
        let now = ContinuousClock.now
        let key = Key(channel: channel, uid: uid)
        state.withLock { state in
            state.last[key] = now
            if var seen = state.fresh[key] {
                seen.last = now
                seen.count += 1
                state.fresh[key] = seen
            } else {
                state.fresh[key] = Seen(first: now, last: now, count: 1)
            }
        }
    }

    /// When `uid` was last decoded in `channel`.
    public func last(channel: String, uid: UInt32) -> ContinuousClock.Instant? {
        state.withLock { $0.last[Key(channel: channel, uid: uid)] }
    }

    /// The pictures since the last call, by publisher.
    public func take() -> [Key: Seen] {
        state.withLock { state in
            defer { state.fresh = [:] }
            return state.fresh
        }
    }
}

/// What an engine told its app about its connections (state changes, rejoins, errors), the
/// newest 40 entries with their times: a violation quotes it, so a report says why.
public final class Diary: Sendable {
    private let entries = Mutex<[(at: ContinuousClock.Instant, text: String)]>([])

    public init() {}

    /// Notes the connection-level events; others are not kept.
    public func note(_ event: EngineEvent) {
        let text: String
        switch event {
        case .connectionStateChanged(let connection, let state, let reason): text = "\(connection.channel) \(state) (\(reason))"
        case .rejoinedChannel(let connection, let elapsed): text = "\(connection.channel) rejoined after \(elapsed.milliseconds) ms"
        case .error(let connection, let error): text = "\(connection?.channel ?? "-") error \(error)"
        case .connectionClosed(let connection, let error): text = "\(connection.channel) closed: \(error)"
        default: return
        }
        note(text)
    }

    /// Notes what `engine` reports from now on, until the task returned is cancelled.
    public func listen(to engine: ShowroomEngine) -> Task<Void, Never> {
        let events = engine.events(bufferingNewest: 1_000)
        return Task { for await event in events { note(event) } }
    }

    public func note(_ text: String) {
        let now = ContinuousClock.now
        entries.withLock { entries in
            entries.append((now, text))
            if entries.count > 40 { entries.removeFirst(entries.count - 40) }
        }
    }

    /// The entries of the last `window`, each with its age, oldest first ("none" when there are none).
    public func recent(_ window: Duration, now: ContinuousClock.Instant = .now) -> String {
        let lines = entries.withLock { $0 }.filter { $0.at >= now - window }
            .map { "-\($0.at.duration(to: now).milliseconds) ms \($0.text)" }
        return lines.isEmpty ? "none" : lines.joined(separator: "; ")
    }
}

/// An audience member's engine the way an app runs it: every broadcaster announced
/// (`userJoined`) gets a decoding sink once per connection, and what is decoded is noted.
final class WatchingEngine: Sendable {
    let engine: ShowroomEngine
    let uid: UInt32
    let sightings = Sightings()
    let diary = Diary()
    private let watcher: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(engine: ShowroomEngine, uid: UInt32) {
        self.engine = engine
        self.uid = uid
        let events = engine.events(bufferingNewest: 10_000)
        let (sightings, diary) = (self.sightings, self.diary)
        let task = Task {
            var sinks = Set<Sightings.Key>()
            for await event in events {
                diary.note(event)
                switch event {
                case .userJoined(let connection, let remote):
                    let key = Sightings.Key(channel: connection.channel, uid: remote)
                    guard sinks.insert(key).inserted else { continue }
                    let channel = connection.channel
                    try? await engine.setupRemoteVideo(uid: remote, connection: connection, sink: DecodingVideoSink(readFrameCounters: false) { _ in
                        sightings.record(channel: channel, uid: remote)
                    })
                case .connectionStateChanged(let connection, .disconnected, _), .connectionStateChanged(let connection, .failed, _),
                     .connectionClosed(let connection, _):
                    // Gone from the channel: a later join sets its sinks again.
                    sinks = sinks.filter { $0.channel != connection.channel }
                default:
                    break
                }
            }
        }
        watcher.withLock { $0 = task }
    }

    func stop() { watcher.withLock { $0?.cancel() } }
}

/// A room's host: live in its room's channel, logged in to signaling, answering calls as the
/// schedule says.
final class EveningHost: Sendable {
    /// What the host does with the next call that rings.
    enum Answer: Sendable { case accept, reject, ignore }

    let room: Int
    let roomID: String
    let uid: UInt32
    let engine: ShowroomEngine
    let live: ChannelConnection
    let calls: CallClient
    let answer = Mutex(Answer.ignore)
    /// When the host's current call connected and ended (nil while none).
    let callWindow = Mutex<(connected: ContinuousClock.Instant?, ended: ContinuousClock.Instant?)>((nil, nil))
    let log: Mutex<[CallClientEvent]> = Mutex([])
    /// What the host's engine said about its connections.
    let diary = Diary()
    private let reader: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let diarist: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(room: Int, roomID: String, uid: UInt32, engine: ShowroomEngine, live: ChannelConnection, calls: CallClient) {
        self.room = room
        self.roomID = roomID
        self.uid = uid
        self.engine = engine
        self.live = live
        self.calls = calls
        let task = Task { [self] in
            for await event in calls.events {
                log.withLock { $0.append(event) }
                switch event {
                case .stateChanged(.calling, _, _, let info?) where info.callee == uid:
                    switch answer.withLock({ $0 }) {
                    case .accept: try? await calls.accept(remoteUserId: info.caller)
                    case .reject: try? await calls.reject(remoteUserId: info.caller, reason: "busy tonight")
                    case .ignore: break
                    }
                case .connected:
                    callWindow.withLock { $0 = (.now, nil) }
                case .disconnected:
                    callWindow.withLock { $0.ended = .now }
                default:
                    break
                }
            }
        }
        reader.withLock { $0 = task }
        diarist.withLock { $0 = diary.listen(to: engine) }
    }

    func stop() {
        reader.withLock { $0?.cancel() }
        diarist.withLock { $0?.cancel() }
    }
}

/// A viewer that stays in one room all evening (following its PKs in subscribe mode); the first
/// of each room may call the host, the first two may take a co-host seat (they have a camera).
final class EveningViewer: Sendable {
    let room: Int
    let index: Int
    let watching: WatchingEngine
    let calls: CallClient?
    /// The viewer app's room service: its room's events (PKs to follow, its seat), chat.
    let rooms: RoomService
    let callLog: Mutex<[CallClientEvent]> = Mutex([])
    /// The seat this viewer holds (set by the room layer's seat follower), if any.
    let seat: Mutex<CoHostSeat?> = Mutex(nil)
    let stageRefusal: Mutex<ShowroomError?> = Mutex(nil)
    let tasks: Mutex<[Task<Void, Never>]> = Mutex([])

    var uid: UInt32 { watching.uid }
    var engine: ShowroomEngine { watching.engine }

    init(room: Int, index: Int, watching: WatchingEngine, calls: CallClient?, rooms: RoomService) {
        self.room = room
        self.index = index
        self.watching = watching
        self.calls = calls
        self.rooms = rooms
        if let calls {
            let task = Task { [self] in
                for await event in calls.events { callLog.withLock { $0.append(event) } }
            }
            tasks.withLock { $0.append(task) }
        }
    }

    func stop() {
        watching.stop()
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }
}
