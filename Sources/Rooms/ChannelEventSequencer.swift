import ShowroomWire

/// Numbers what edges saw in channels into channel events: per channel from 1, +1 per event, so
/// that business servers can order them and de-duplicate on the notice id.
public struct ChannelEventSequencer: Sendable {
    /// The last number given per channel.
    public private(set) var lastSequence: [String: UInt64] = [:]

    /// Creates a sequencer that has numbered nothing.
    public init() {}

    /// The next event of `activity`'s channel.
    ///
    /// - Parameters:
    ///   - activity: What the edge saw.
    ///   - edge: The edge that saw it.
    ///   - nowMs: The time now (the event's `notifiedAtMs`).
    /// - Returns: The event: the activity's fields, the next sequence, notice id "<channel>-<sequence>".
    public mutating func number(_ activity: RoomChannelActivity, edge: String, nowMs: Int64) -> RoomChannelEvent {
        let sequence = (lastSequence[activity.channel] ?? 0) + 1
        lastSequence[activity.channel] = sequence
        var event = RoomChannelEvent()
        event.noticeID = "\(activity.channel)-\(sequence)"
        event.type = activity.type
        event.channel = activity.channel
        event.uid = activity.uid
        event.reason = activity.reason
        event.atMs = activity.atMs
        event.sequence = sequence
        event.edge = edge
        event.notifiedAtMs = nowMs
        return event
    }

    /// Takes in the numbers of another coordinator or the store: per channel the higher wins.
    ///
    /// - Returns: The sequences taken, by channel.
    public mutating func merge(_ incoming: [RoomChannelSequence]) -> [RoomChannelSequence] {
        var taken: [RoomChannelSequence] = []
        for sequence in incoming where !sequence.channel.isEmpty {
            guard sequence.lastSequence > (lastSequence[sequence.channel] ?? 0) else { continue }
            lastSequence[sequence.channel] = sequence.lastSequence
            taken.append(sequence)
        }
        return taken.sorted { $0.channel < $1.channel }
    }

    /// The last number per channel, by channel: what to persist and replicate.
    public var sequences: [RoomChannelSequence] {
        lastSequence.keys.sorted().map { channel in
            var sequence = RoomChannelSequence()
            sequence.channel = channel
            sequence.lastSequence = lastSequence[channel] ?? 0
            return sequence
        }
    }

    /// The last number of one channel, to persist and replicate after numbering.
    public func sequence(of channel: String) -> RoomChannelSequence {
        var sequence = RoomChannelSequence()
        sequence.channel = channel
        sequence.lastSequence = lastSequence[channel] ?? 0
        return sequence
    }
}
