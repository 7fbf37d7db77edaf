import ShowroomWire

/// A channel's events numbered by this coordinator and not yet published, as a pure value type:
/// an event goes out once its number is replicated (or settled anyway), and only after every
/// event numbered before it in its channel went out, so a report whose replication is repaired
/// later than the next one's holds that one back and no subscriber sees a gap.
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

    private static func key(_ event: RoomChannelEvent) -> String { "\(event.channel)/\(event.series)/\(event.sequence)" }
}
