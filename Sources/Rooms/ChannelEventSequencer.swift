import ShowroomWire

/// Numbers what edges saw in channels into channel events: per channel from 1, +1 per event, so
/// that business servers can order them and de-duplicate on the notice id.
///
/// Edges send again what a coordinator did not answer, so the same activity may arrive twice: per
/// channel the sequencer remembers the last activity it numbered from each recent edge run (its
/// origin) and numbers nothing from that run at or below it. The marks travel with the numbers
/// (persisted, replicated, merged), so a successor taking over skips them too.
public struct ChannelEventSequencer: Sendable {
    /// Edge runs remembered per channel; a channel sees a new one when it moves or its edge
    /// restarts, so a handful covers every run that could still be resending.
    public static let originsKept = 8

    /// The last number given per channel.
    public private(set) var lastSequence: [String: UInt64] = [:]
    /// Per channel, the last activity numbered from each recent edge run, least recent first.
    private var origins: [String: [RoomActivityOriginMark]] = [:]

    /// Creates a sequencer that has numbered nothing.
    public init() {}

    /// The next event of `activity`'s channel.
    ///
    /// - Parameters:
    ///   - activity: What the edge saw.
    ///   - edge: The edge that saw it.
    ///   - nowMs: The time now (the event's `notifiedAtMs`).
    /// - Returns: The event: the activity's fields, the next sequence, notice id "<channel>-<sequence>";
    ///   nil if this activity (same origin, same or earlier origin sequence) was numbered already.
    public mutating func number(_ activity: RoomChannelActivity, edge: String, nowMs: Int64) -> RoomChannelEvent? {
        if !activity.origin.isEmpty {
            guard note(origin: activity.origin, sequence: activity.originSequence, in: activity.channel) else { return nil }
        }
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

    /// Takes in the numbers of another coordinator or the store: per channel the higher number
    /// wins, and per edge run the later mark.
    ///
    /// - Returns: The channels that changed, with everything now known about them (to persist).
    public mutating func merge(_ incoming: [RoomChannelSequence]) -> [RoomChannelSequence] {
        var changed = Set<String>()
        for sequence in incoming where !sequence.channel.isEmpty {
            if sequence.lastSequence > (lastSequence[sequence.channel] ?? 0) {
                lastSequence[sequence.channel] = sequence.lastSequence
                changed.insert(sequence.channel)
            }
            for mark in sequence.origins where !mark.origin.isEmpty {
                if note(origin: mark.origin, sequence: mark.originSequence, in: sequence.channel) {
                    changed.insert(sequence.channel)
                }
            }
        }
        return changed.sorted().map { sequence(of: $0) }
    }

    /// The last number per channel, by channel: what to persist and replicate.
    public var sequences: [RoomChannelSequence] {
        lastSequence.keys.sorted().map { sequence(of: $0) }
    }

    /// Everything known about one channel's numbers, to persist and replicate after numbering.
    public func sequence(of channel: String) -> RoomChannelSequence {
        var sequence = RoomChannelSequence()
        sequence.channel = channel
        sequence.lastSequence = lastSequence[channel] ?? 0
        sequence.origins = origins[channel] ?? []
        return sequence
    }

    /// Records that `origin` reached `number` in `channel`. Returns false (changing nothing) when
    /// it had reached it already.
    private mutating func note(origin: String, sequence number: UInt64, in channel: String) -> Bool {
        var marks = origins[channel] ?? []
        if let index = marks.firstIndex(where: { $0.origin == origin }) {
            guard number > marks[index].originSequence else { return false }
            marks.remove(at: index)
        }
        var mark = RoomActivityOriginMark()
        mark.origin = origin
        mark.originSequence = number
        marks.append(mark)
        if marks.count > Self.originsKept { marks.removeFirst(marks.count - Self.originsKept) }
        origins[channel] = marks
        return true
    }
}
