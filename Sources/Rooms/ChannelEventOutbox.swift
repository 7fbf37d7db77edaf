import ShowroomWire

/// A channel's events numbered by this coordinator and not yet published, as a pure value type:
/// an event goes out once its number is replicated (or settled anyway), and only after every
/// event numbered before it in its channel went out, so a report whose replication is repaired
/// later than the next one's holds that one back and no subscriber sees a gap. Events numbered
/// elsewhere or before a restart, which may never have gone out, join them
/// (``republish(_:)``) in number order.
public struct ChannelEventOutbox: Sendable, Equatable {
    private struct Pending: Sendable, Equatable {
        var event: RoomChannelEvent
        var settled = false
    }

    private var channels: [String: [Pending]] = [:]

    /// An empty outbox.
    public init() {}

    /// How many events wait.
    public var count: Int { channels.values.reduce(0) { $0 + $1.count } }

    /// `event` was numbered: it waits for its number to be replicated.
    public mutating func numbered(_ event: RoomChannelEvent) {
        channels[event.channel, default: []].append(Pending(event: event))
    }

    /// `events` have their numbers replicated. Returns what may be published now, each channel's
    /// in number order.
    public mutating func settled(_ events: [RoomChannelEvent]) -> [RoomChannelEvent] {
        let keys = Set(events.map(Self.key))
        var ready: [RoomChannelEvent] = []
        for channel in Set(events.map(\.channel)).sorted() {
            guard var queue = channels[channel] else { continue }
            for index in queue.indices where keys.contains(Self.key(queue[index].event)) { queue[index].settled = true }
            while let first = queue.first, first.settled {
                queue.removeFirst()
                ready.append(first.event)
            }
            channels[channel] = queue.isEmpty ? nil : queue
        }
        return ready
    }

    /// `events` were numbered before (by a coordinator that owned their channel, or here before a
    /// restart) and may never have gone out: their numbers are held already, so each one not
    /// waiting here waits as settled, in number order among its channel's. Returns what may be
    /// published now, each channel's in number order.
    public mutating func republish(_ events: [RoomChannelEvent]) -> [RoomChannelEvent] {
        var ready: [RoomChannelEvent] = []
        for (channel, events) in Dictionary(grouping: events, by: \.channel).sorted(by: { $0.key < $1.key }) {
            var queue = channels[channel] ?? []
            var waiting = Set(queue.map { Self.key($0.event) })
            for event in events where waiting.insert(Self.key(event)).inserted {
                let index = queue.firstIndex { Self.precedes(event, $0.event) } ?? queue.endIndex
                queue.insert(Pending(event: event, settled: true), at: index)
            }
            while let first = queue.first, first.settled {
                queue.removeFirst()
                ready.append(first.event)
            }
            channels[channel] = queue.isEmpty ? nil : queue
        }
        return ready
    }

    private static func precedes(_ a: RoomChannelEvent, _ b: RoomChannelEvent) -> Bool {
        (a.series, a.sequence) < (b.series, b.sequence)
    }

    private static func key(_ event: RoomChannelEvent) -> String { "\(event.channel)/\(event.series)/\(event.sequence)" }
}
