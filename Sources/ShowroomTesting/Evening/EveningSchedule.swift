import Foundation
import Membership
import ZeroMQ

/// What one evening is made of: its seed, how long it lasts, how many rooms and viewers.
public struct EveningSettings: Sendable, Hashable {
    /// Every choice of the schedule comes from it: the same seed, the same schedule.
    public var seed: UInt64
    /// How long steps keep starting (the last one may end a little after).
    public var duration: Duration
    /// Live rooms, each with a host (at least 2: a PK needs two).
    public var rooms: Int
    /// Viewers that stay in each room all evening (at least 1).
    public var viewersPerRoom: Int
    /// Viewers that swipe from room to room with the video loader.
    public var swipers: Int
    /// Whether the schedule takes processes away (drain, SIGKILL, scale, restarts).
    public var operations: Bool

    public init(seed: UInt64, duration: Duration, rooms: Int = 4, viewersPerRoom: Int = 3, swipers: Int = 2, operations: Bool = true) {
        self.seed = seed
        self.duration = duration
        self.rooms = rooms
        self.viewersPerRoom = viewersPerRoom
        self.swipers = swipers
        self.operations = operations
    }
}

/// How a scheduled 1v1 call ends (CallAPI's outcomes).
public enum EveningCallOutcome: String, Sendable, Hashable, CaseIterable {
    case hungUpByCaller, hungUpByCallee, rejected, timedOut, cancelledWhileRinging
}

/// How a scheduled PK goes.
public enum EveningPKOutcome: String, Sendable, Hashable, CaseIterable {
    /// Invited, accepted, stopped by the inviting host or by the invited one.
    case stoppedByInviter, stoppedByInvitee
    /// Invited and refused, or withdrawn before an answer.
    case rejected, cancelled
    /// Accepted with a duration: the server ends it.
    case durationEnded
    /// Both hosts invite each other at once: one PK, stopped by either.
    case crossInvited
    /// Both hosts ask for a random match and are paired.
    case matched
}

/// How a scheduled co-host seat goes.
public enum EveningCoHostOutcome: String, Sendable, Hashable, CaseIterable {
    /// The viewer applies, is seated, then steps down (or the host ends the seat).
    case appliedSteppedDown, appliedStoppedByHost
    /// The host invites the viewer, who accepts; the host ends the seat.
    case invitedStoppedByHost
    /// The host refuses the application.
    case appliedRejected
}

/// The operations an evening performs on the cluster.
public enum EveningOperation: String, Sendable, Hashable, CaseIterable {
    /// SIGTERM an edge (it drains; its clients move), then start one in its place.
    case drainEdge
    /// SIGKILL an edge, then start one in its place.
    case killEdge
    /// One more edge, then back.
    case scaleEdgesUpAndDown
    /// SIGKILL a room-coordinator and start it again.
    case killCoordinator
    /// SIGKILL a call-signal node and start it again.
    case killCallSignal
}

/// What a step does.
public enum EveningAction: Sendable, Hashable, CustomStringConvertible {
    /// A viewer of `room` calls its host.
    case call(room: Int, EveningCallOutcome)
    /// `room`'s host and `peer`'s in a PK, forwarded by the cluster or subscribed by the audiences.
    case pk(room: Int, peer: Int, subscribe: Bool, EveningPKOutcome)
    /// A viewer of `room` (its first) on a co-host seat, with `extraSeats` more viewers seated beside.
    case coHost(room: Int, extraSeats: Int, EveningCoHostOutcome)
    /// A swiping viewer goes through `count` rooms from `from`.
    case swipe(swiper: Int, from: Int, count: Int)
    /// Chat in `room`.
    case chat(room: Int, messages: Int)
    case operation(EveningOperation)

    public var description: String {
        switch self {
        case .call(let room, let outcome): "call room=\(room) \(outcome.rawValue)"
        case .pk(let room, let peer, let subscribe, let outcome): "pk room=\(room) peer=\(peer) \(subscribe ? "subscribe" : "forward") \(outcome.rawValue)"
        case .coHost(let room, let extra, let outcome): "cohost room=\(room) seats=\(1 + extra) \(outcome.rawValue)"
        case .swipe(let swiper, let from, let count): "swipe swiper=\(swiper) from=\(from) rooms=\(count)"
        case .chat(let room, let messages): "chat room=\(room) messages=\(messages)"
        case .operation(let operation): "operation \(operation.rawValue)"
        }
    }

    /// The rooms whose show it changes (their hosts, their stage, their audience's view).
    public var rooms: [Int] {
        switch self {
        case .call(let room, _), .coHost(let room, _, _), .chat(let room, _): [room]
        case .pk(let room, let peer, _, _): [room, peer]
        case .swipe, .operation: []
        }
    }
}

/// One step of an evening: when it starts (from the evening's start), how long it holds its rooms.
public struct EveningStep: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var at: Duration
    public var length: Duration
    public var action: EveningAction

    public var description: String { "#\(index) at \(Self.seconds(at)) for \(Self.seconds(length)): \(action)" }

    static func seconds(_ duration: Duration) -> String {
        let ms = duration.milliseconds
        return "\(ms / 1000).\(String(format: "%03d", ms % 1000))s"
    }
}

/// The schedule of an evening, drawn from its seed: steps start one after another at random gaps,
/// each room in at most one step at a time (a host does one thing at once), swipers and chat
/// among them, and operations alone (nothing else runs while a process is taken away, so what
/// an operation does is seen on its own).
public struct EveningSchedule: Sendable {
    public let settings: EveningSettings
    public let steps: [EveningStep]

    /// The time each room needs after a step before the next one (the show settles).
    static let settle: Duration = .seconds(2)
    /// An operation's quiet time after it (a restarted process joins, clients settle).
    static let operationSettle: Duration = .seconds(6)

    public init(_ settings: EveningSettings) {
        precondition(settings.rooms >= 2 && settings.viewersPerRoom >= 1, "an evening needs two rooms with a viewer each")
        self.settings = settings
        var random = SeededRandom(seed: settings.seed)
        var steps: [EveningStep] = []
        var roomFree = [Duration](repeating: .seconds(2), count: settings.rooms)
        var swiperFree = [Duration](repeating: .seconds(2), count: settings.swipers)
        var everythingFree = Duration.seconds(2)
        var time = Duration.seconds(2)
        let end = settings.duration
        func ms(_ range: ClosedRange<Int64>) -> Duration { .milliseconds(Int64.random(in: range, using: &random)) }
        while time < end {
            time += ms(300...1500)
            guard time < end else { break }
            if time < everythingFree { time = everythingFree }
            let roll = Int.random(in: 0..<100, using: &random)
            let free = (0..<settings.rooms).filter { roomFree[$0] <= time }
            var action: EveningAction?
            var length = Duration.zero
            switch roll {
            case 0..<24 where !free.isEmpty:
                let room = free.randomElement(using: &random)!
                let outcome = EveningCallOutcome.allCases.randomElement(using: &random)!
                action = .call(room: room, outcome)
                length = outcome == .timedOut ? .seconds(5) : ms(2500...5000)
            case 24..<48 where free.count >= 2:
                let pair = free.shuffled(using: &random).prefix(2)
                let outcome = EveningPKOutcome.allCases.randomElement(using: &random)!
                action = .pk(room: pair.first!, peer: pair.last!, subscribe: Bool.random(using: &random), outcome)
                length = outcome == .durationEnded ? .seconds(4) : ms(2000...5000)
            case 48..<66 where !free.isEmpty:
                let room = free.randomElement(using: &random)!
                let outcome = EveningCoHostOutcome.allCases.randomElement(using: &random)!
                let extra = settings.viewersPerRoom > 1 && outcome != .appliedRejected ? Int.random(in: 0...min(1, settings.viewersPerRoom - 1), using: &random) : 0
                action = .coHost(room: room, extraSeats: extra, outcome)
                length = ms(2000...4000)
            case 66..<80 where settings.swipers > 0:
                let swiper = Int.random(in: 0..<settings.swipers, using: &random)
                guard swiperFree[swiper] <= time else { break }
                let count = Int.random(in: 2...max(2, min(6, settings.rooms)), using: &random)
                action = .swipe(swiper: swiper, from: Int.random(in: 0..<settings.rooms, using: &random), count: count)
                length = .milliseconds(900 * Int64(count))
                swiperFree[swiper] = time + length + Self.settle
            case 80..<90 where !free.isEmpty:
                action = .chat(room: free.randomElement(using: &random)!, messages: Int.random(in: 1...3, using: &random))
                length = .zero
            case 90..<100 where settings.operations && time + .seconds(20) < end:
                // Alone: after every room's step has ended.
                time = max(time, roomFree.max()!, swiperFree.max() ?? time)
                let operation = EveningOperation.allCases.randomElement(using: &random)!
                action = .operation(operation)
                length = .seconds(4)
                everythingFree = time + length + Self.operationSettle
                for room in roomFree.indices { roomFree[room] = everythingFree }
                for swiper in swiperFree.indices { swiperFree[swiper] = everythingFree }
            default:
                break
            }
            guard let action else { continue }
            for room in action.rooms { roomFree[room] = time + length + Self.settle }
            steps.append(EveningStep(index: steps.count, at: time, length: length, action: action))
        }
        self.steps = steps
    }

    /// A digest of the schedule (FNV-1a over its steps' descriptions): equal for equal schedules,
    /// printed so two runs of one seed can be compared at a glance.
    public var digest: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for step in steps {
            for byte in step.description.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        return String(hash, radix: 16)
    }

    /// How many steps of each kind, by the action's first word.
    public var counts: [String: Int] {
        Dictionary(grouping: steps, by: { String($0.action.description.prefix { $0 != " " }) }).mapValues(\.count)
    }
}
