import ShowroomWire

/// Numbers what edges saw in channels into channel events: per channel from 1, +1 per event, so
/// that business servers can order them and de-duplicate on the notice id.
///
/// Edges send again what a coordinator did not answer, so the same activity may arrive twice: per
/// channel the sequencer remembers the last activity it numbered from each recent edge run (its
/// origin) and numbers nothing from that run at or below it. The marks travel with the numbers
/// (persisted, replicated, merged), so a successor taking over skips them too.
///
/// **Series.** A cluster that runs for months sees a new channel name with every 1v1 call, so a
/// channel's numbers are forgotten once it is gone (``prune(nowMs:hosted:)``): its last event
/// destroyed it and ``Retention/endedMs`` passed, or no event came for ``Retention/abandonedMs``
/// (an edge that died never reports its channels destroyed); and never while an edge hosts it. A
/// channel that comes back starts a new *series* numbered from 1, dated by when it began: its
/// notice ids are `<channel>/<series>-<sequence>`, which no earlier series of the channel used.
/// Knowing that a channel *had* numbers would mean remembering every name ever pruned (the growth
/// this removes), so every series begun here is dated, the first one too; series begun before
/// series were dated (held with series 0) keep their `<channel>-<sequence>` ids until pruned.
/// Channel names hold no `/`, so ids of different channels never meet. Two series of one channel
/// get different dates as long as coordinators' clocks differ by less than the retention.
///
/// Every coordinator holding a channel's numbers prunes them by the same rule from the same
/// replicated record (when the last event was numbered, whether it ended the channel), so no
/// tombstone is kept; a merge refuses a record that the rule would prune at once, so a replica
/// handing over what it holds does not bring a pruned channel back, and a later series always
/// wins over an earlier one, so a merge never goes back to an old series.
///
/// **Unpublished events.** An event is published once its number is replicated, after the
/// activity's mark already went to the store and the successor: an owner that dies in between
/// leaves a mark that makes the edge's resend count as numbered, and the event would never go out.
/// So each record also carries the events numbered and not yet published here
/// (``unpublished(of:)``), persisted and replicated with the marks; whoever owns the channel next
/// publishes them again (``channelsWithUnpublished``), and an event published is dropped from the
/// record here (``published(_:)``). Publication is at least once: receivers de-duplicate on the
/// notice id.
///
/// **Leaves nobody reports.** An edge that dies, or restarts, before its report of users leaving
/// gets through never sends it: each record carries who is in the channel by edge run
/// (``ChannelPresence``, persisted and replicated with the marks), and the channel's owner numbers
/// the leaves of users whose every connection was on a run that is gone (``depart(from:isGone:endsChannel:nowMs:newSeriesAtMs:)``),
/// once: the record that numbered them no longer holds those connections.
public struct ChannelEventSequencer: Sendable {
    /// Edge runs remembered per channel; a channel sees a new one when it moves or its edge
    /// restarts, so a handful covers every run that could still be resending.
    public static let originsKept = 8
    /// Unpublished events kept per channel at most (the latest): more than one edge report's
    /// worth, and a bound on what a peer's record can bring.
    public static let unpublishedKept = 1_000

    /// How long a channel's numbers are kept once it is gone.
    public struct Retention: Sendable, Equatable {
        /// After an event that destroyed the channel (default 1 h): long past any resend of its
        /// activities, and past any webhook retry.
        public var endedMs: Int64
        /// After the last event, whatever it was, while no edge hosts the channel (default 24 h):
        /// a channel whose edge died without reporting it destroyed.
        public var abandonedMs: Int64

        /// A retention; the defaults are 1 h after the channel's end, 24 h after its last event.
        public init(endedMs: Int64 = 3_600_000, abandonedMs: Int64 = 86_400_000) {
            self.endedMs = endedMs
            self.abandonedMs = abandonedMs
        }
    }

    /// How long numbers of channels that are gone are kept.
    public var retention: Retention
    /// What is known about each channel's numbers: its series, last number, when it was last
    /// numbered, whether that event ended it, and the last activity numbered from each recent
    /// edge run (least recent first).
    private var records: [String: RoomChannelSequence] = [:]
    /// Who is in each channel, as its events say: which joins and leaves are news, and whose
    /// leaves nobody will report. Held apart from `records`, and part of each record written.
    public private(set) var presence = ChannelPresence()
    /// The channels whose record holds unpublished events.
    private var withUnpublished: Set<String> = []

    /// Creates a sequencer that has numbered nothing.
    public init(retention: Retention = Retention()) {
        self.retention = retention
    }

    /// How many channels' numbers are held.
    public var count: Int { records.count }

    /// The last number given per channel (in its current series).
    public var lastSequence: [String: UInt64] { records.mapValues(\.lastSequence) }

    /// The next event of `activity`'s channel.
    ///
    /// - Parameters:
    ///   - activity: What the edge saw.
    ///   - edge: The edge that saw it.
    ///   - nowMs: The time now (the event's `notifiedAtMs`, and a new series' date).
    /// - Returns: The event: the activity's fields, the next sequence in the channel's series,
    ///   notice id `<channel>/<series>-<sequence>` (`<channel>-<sequence>` in an undated series);
    ///   nil if this activity (same origin, same or earlier origin sequence) was numbered already,
    ///   or is no news for the channel (``ChannelPresence/take(_:edge:)``: a join of a user
    ///   connected on another edge, or a leave of a connection that was not its last).
    ///   The event is held in the channel's record as unpublished until ``published(_:)``.
    ///   - newSeriesAtMs: Begin a new series first, dated this (the take-over's term, see
    ///     `TakeOver.termMs`) or just after the current one, keeping what each edge run had
    ///     numbered: for a coordinator that takes over a channel's numbering, so numbers it gives
    ///     never meet those a coordinator that still took itself for the owner gives in the old
    ///     series, and its series is the later one.
    public mutating func number(_ activity: RoomChannelActivity, edge: String, nowMs: Int64,
                                newSeriesAtMs: Int64? = nil) -> RoomChannelEvent? {
        var record = records[activity.channel] ?? Self.newSeries(activity.channel, nowMs: nowMs)
        if !activity.origin.isEmpty {
            guard Self.note(origin: activity.origin, sequence: activity.originSequence, in: &record) else { return nil }
        }
        record.revision &+= 1
        guard presence.take(activity, edge: edge) else {
            records[activity.channel] = record  // its origin's mark (and who is where), so it is not taken again
            return nil
        }
        let event = Self.event(of: activity, edge: edge, in: &record, nowMs: nowMs, newSeriesAtMs: newSeriesAtMs)
        records[activity.channel] = record
        withUnpublished.insert(activity.channel)
        return event
    }

    /// The channels where a user is connected on an edge run that `isGone` (edge, run): leaves
    /// nobody will report are due there (``depart(from:isGone:endsChannel:nowMs:newSeriesAtMs:)``).
    public func channelsWithDepartures(isGone: (_ edge: String, _ run: String) -> Bool) -> [String] {
        presence.channels(withConnectionsOn: isGone)
    }

    /// Numbers the leaves of `channel` that nobody will report: of each user whose every
    /// connection was on an edge run that `isGone` (its process died, or the edge restarted), as a
    /// broadcaster's or an audience member's leave with reason `server`; then the channel's end if
    /// nobody is left, the last event did not end it, and `endsChannel` says the gone edge's end is
    /// the channel's (no other edge hosts it). A user also connected on a run that lives stays.
    /// The record no longer holds the gone connections, so each leave is numbered once, here or
    /// by whoever owns the channel next.
    ///
    /// - Parameters:
    ///   - channel: The channel.
    ///   - isGone: Whether an (edge, run) is gone for good.
    ///   - endsChannel: Whether the channel ends with the gone edge (by its id).
    ///   - nowMs: The time now: the events' `atMs` and `notifiedAtMs`.
    ///   - newSeriesAtMs: As for ``number(_:edge:nowMs:newSeriesAtMs:)``.
    /// - Returns: The events, in number order, held as unpublished until ``published(_:)``. The
    ///   channel's record changes even when there are none (connections taken out): persist and
    ///   replicate it.
    public mutating func depart(from channel: String, isGone: (_ edge: String, _ run: String) -> Bool,
                                endsChannel: (String) -> Bool, nowMs: Int64, newSeriesAtMs: Int64? = nil) -> [RoomChannelEvent] {
        let departures = presence.depart(from: channel, isGone: isGone)
        guard var record = records[channel] else { return [] }
        record.revision &+= 1
        var events: [RoomChannelEvent] = []
        func add(_ type: RoomChannelEventType, uid: UInt32, reason: RoomChannelLeaveReason, edge: String) {
            var activity = RoomChannelActivity()
            activity.type = type
            activity.channel = channel
            activity.uid = uid
            activity.reason = reason
            activity.atMs = nowMs
            events.append(Self.event(of: activity, edge: edge, in: &record, nowMs: nowMs,
                                     newSeriesAtMs: events.isEmpty ? newSeriesAtMs : nil))
        }
        for departure in departures {
            add(departure.broadcaster ? .broadcasterLeft : .audienceLeft, uid: departure.uid, reason: .server, edge: departure.edge)
        }
        if let last = departures.last, presence.count(in: channel) == 0, !record.ended, endsChannel(last.edge) {
            add(.channelDestroyed, uid: 0, reason: .unspecified, edge: last.edge)
        }
        records[channel] = record
        if !events.isEmpty { withUnpublished.insert(channel) }
        return events
    }

    /// The next event of `record`'s channel, for `activity` seen by `edge`, held in the record as
    /// unpublished; begun in a new series when `newSeriesAtMs` says so (see ``number(_:edge:nowMs:newSeriesAtMs:)``).
    private static func event(of activity: RoomChannelActivity, edge: String, in record: inout RoomChannelSequence,
                              nowMs: Int64, newSeriesAtMs: Int64?) -> RoomChannelEvent {
        if let newSeriesAtMs, record.lastSequence > 0 {
            let (origins, unpublished, revision) = (record.origins, record.unpublished, record.revision)
            record = Self.newSeries(activity.channel, nowMs: max(newSeriesAtMs, record.series &+ 1))
            record.origins = origins
            // The old series' events not out yet still go out.
            record.unpublished = unpublished
            record.revision = revision
        }
        record.lastSequence += 1
        record.lastNumberedAtMs = nowMs
        record.ended = activity.type == .channelDestroyed
        var event = RoomChannelEvent()
        event.noticeID = Self.noticeID(channel: activity.channel, series: record.series, sequence: record.lastSequence)
        event.type = activity.type
        event.channel = activity.channel
        event.uid = activity.uid
        event.reason = activity.reason
        event.atMs = activity.atMs
        event.sequence = record.lastSequence
        event.series = record.series
        event.edge = edge
        event.notifiedAtMs = nowMs
        if activity.hasRecording { event.recording = activity.recording }
        record.unpublished.append(event)
        Self.trimUnpublished(&record)
        return event
    }

    /// The events of `channel` numbered and not known to be published: numbered here, or by
    /// another coordinator (or before a restart) that may have died before publishing them. In
    /// number order.
    public func unpublished(of channel: String) -> [RoomChannelEvent] {
        records[channel]?.unpublished ?? []
    }

    /// The channels holding unpublished events (``unpublished(of:)``).
    public var channelsWithUnpublished: Set<String> { withUnpublished }

    /// `events` went out: their records no longer hold them. Only here: the next write or
    /// hand-over of a record carries it without them, and until then a holder taking the channel
    /// over publishes them again.
    public mutating func published(_ events: [RoomChannelEvent]) {
        for (channel, events) in Dictionary(grouping: events, by: \.channel) {
            guard var record = records[channel], !record.unpublished.isEmpty else { continue }
            let out = Set(events.map { Self.key($0) })
            record.unpublished.removeAll { out.contains(Self.key($0)) }
            records[channel] = record
            if record.unpublished.isEmpty { withUnpublished.remove(channel) }
        }
    }

    /// The notice id of event `sequence` of a channel's `series`.
    public static func noticeID(channel: String, series: Int64, sequence: UInt64) -> String {
        series == 0 ? "\(channel)-\(sequence)" : "\(channel)/\(series)-\(sequence)"
    }

    /// Takes in the numbers of another coordinator or the store: per channel the later series
    /// wins; in the same series the higher number, and per edge run the later mark; who is in
    /// the channel comes with the later (series, number, revision). A channel not
    /// held here whose record the retention would prune now (ended long ago) is not taken: it was
    /// pruned here, or is about to be everywhere.
    ///
    /// - Parameters:
    ///   - incoming: The records.
    ///   - nowMs: The time now; a record that does not say when it was last numbered counts as
    ///     numbered now (kept a full retention).
    /// - Returns: The channels that changed, with everything now known about them (to persist).
    public mutating func merge(_ incoming: [RoomChannelSequence], nowMs: Int64) -> [RoomChannelSequence] {
        var changed = Set<String>()
        for var sequence in incoming where !sequence.channel.isEmpty {
            if sequence.lastNumberedAtMs == 0 { sequence.lastNumberedAtMs = nowMs }
            guard var ours = records[sequence.channel] else {
                guard !(sequence.ended && ended(sequence, retainedAt: nowMs)) else { continue }
                var taken = Self.newSeries(sequence.channel, nowMs: nowMs)
                taken.series = sequence.series
                taken.lastSequence = sequence.lastSequence
                taken.lastNumberedAtMs = sequence.lastNumberedAtMs
                taken.ended = sequence.ended
                taken.revision = sequence.revision
                for mark in sequence.origins where !mark.origin.isEmpty {
                    _ = Self.note(origin: mark.origin, sequence: mark.originSequence, in: &taken)
                }
                Self.takeUnpublished(of: sequence, into: &taken)
                presence.replace(sequence.channel, with: sequence.present)
                set(taken)
                changed.insert(sequence.channel)
                continue
            }
            // An earlier series is over: nothing of it counts any more.
            guard sequence.series >= ours.series else { continue }
            // The unpublished events travel with the record that wins: the later one was written
            // by an owner that knew what it had published; on a tie ours is as new, and may know
            // of more published since.
            let newer = sequence.series > ours.series || sequence.lastSequence > ours.lastSequence
            // Who is where changes without a number too (a join on a second edge is no event).
            let presenceNewer = (sequence.series, sequence.lastSequence, sequence.revision)
                > (ours.series, ours.lastSequence, ours.revision)
            if sequence.series > ours.series {
                ours = Self.newSeries(sequence.channel, nowMs: nowMs)
                ours.series = sequence.series
                ours.lastNumberedAtMs = sequence.lastNumberedAtMs
                ours.ended = sequence.ended
                changed.insert(sequence.channel)
            }
            if sequence.lastSequence > ours.lastSequence {
                ours.lastSequence = sequence.lastSequence
                ours.lastNumberedAtMs = sequence.lastNumberedAtMs
                ours.ended = sequence.ended
                changed.insert(sequence.channel)
            }
            if newer { Self.takeUnpublished(of: sequence, into: &ours) }
            if presenceNewer {
                presence.replace(sequence.channel, with: sequence.present)
                ours.revision = sequence.revision
                changed.insert(sequence.channel)
            }
            for mark in sequence.origins where !mark.origin.isEmpty {
                if Self.note(origin: mark.origin, sequence: mark.originSequence, in: &ours) {
                    changed.insert(sequence.channel)
                }
            }
            set(ours)
        }
        return changed.sorted().map { sequence(of: $0) }
    }

    /// Forgets the numbers of channels that are gone: no edge hosts them (`hosted`), and either
    /// their last event destroyed them ``Retention/endedMs`` ago, or they had no event for
    /// ``Retention/abandonedMs``. Each holder of the numbers prunes them on its own, by this rule.
    ///
    /// - Parameters:
    ///   - nowMs: The time now.
    ///   - hosted: Whether an edge reports hosting a channel (or it is placed) now.
    /// - Returns: The channels pruned, by name (to delete from the store).
    public mutating func prune(nowMs: Int64, hosted: (String) -> Bool) -> [String] {
        var pruned: [String] = []
        for (channel, record) in records where !hosted(channel) {
            let abandoned = record.lastNumberedAtMs <= nowMs - retention.abandonedMs
            guard abandoned || (record.ended && ended(record, retainedAt: nowMs)) else { continue }
            pruned.append(channel)
        }
        for channel in pruned {
            records[channel] = nil
            presence.forget(channel: channel)
            withUnpublished.remove(channel)
        }
        return pruned.sorted()
    }

    /// Every channel's numbers, by channel: what to persist and replicate.
    public var sequences: [RoomChannelSequence] {
        records.keys.sorted().map { sequence(of: $0) }
    }

    /// Whether any number of `channel` is held.
    public func holds(_ channel: String) -> Bool { records[channel] != nil }

    /// Everything known about one channel's numbers, to persist and replicate after numbering.
    public func sequence(of channel: String) -> RoomChannelSequence {
        guard var record = records[channel] else { return RoomChannelSequence.with { $0.channel = channel } }
        record.present = presence.entries(of: channel)
        return record
    }

    /// Holds `record`, noting whether it has unpublished events.
    private mutating func set(_ record: RoomChannelSequence) {
        records[record.channel] = record
        if record.unpublished.isEmpty { withUnpublished.remove(record.channel) } else { withUnpublished.insert(record.channel) }
    }

    /// `incoming`'s unpublished events replace `record`'s: only events of its channel numbered
    /// no later than its last number, in number order, the latest ``unpublishedKept``.
    private static func takeUnpublished(of incoming: RoomChannelSequence, into record: inout RoomChannelSequence) {
        let last = (record.series, record.lastSequence)
        record.unpublished = incoming.unpublished.suffix(unpublishedKept)
            .filter { $0.channel == record.channel && ($0.series, $0.sequence) <= last }
            .sorted { ($0.series, $0.sequence) < ($1.series, $1.sequence) }
    }

    /// Keeps a record's latest ``unpublishedKept`` unpublished events.
    private static func trimUnpublished(_ record: inout RoomChannelSequence) {
        if record.unpublished.count > unpublishedKept { record.unpublished.removeFirst(record.unpublished.count - unpublishedKept) }
    }

    /// An event's place among its channel's: series and number.
    private static func key(_ event: RoomChannelEvent) -> String { "\(event.series)-\(event.sequence)" }

    /// Whether a channel's end (`record` ended) is older than the retention at `nowMs`.
    private func ended(_ record: RoomChannelSequence, retainedAt nowMs: Int64) -> Bool {
        // Subtracted from our own time, not added to a peer's (which may be anything).
        record.lastNumberedAtMs <= nowMs - retention.endedMs
    }

    /// A channel's record with nothing numbered yet, in a series dated `nowMs` (never 0, which
    /// means undated).
    private static func newSeries(_ channel: String, nowMs: Int64) -> RoomChannelSequence {
        var record = RoomChannelSequence()
        record.channel = channel
        record.series = max(nowMs, 1)
        return record
    }

    /// Records that `origin` reached `number` in `record`'s channel. Returns false (changing
    /// nothing) when it had reached it already.
    private static func note(origin: String, sequence number: UInt64, in record: inout RoomChannelSequence) -> Bool {
        if let index = record.origins.firstIndex(where: { $0.origin == origin }) {
            guard number > record.origins[index].originSequence else { return false }
            record.origins.remove(at: index)
        }
        var mark = RoomActivityOriginMark()
        mark.origin = origin
        mark.originSequence = number
        record.origins.append(mark)
        if record.origins.count > originsKept { record.origins.removeFirst(record.origins.count - originsKept) }
        return true
    }
}
