import ShowroomWire

/// What an edge owes the cluster besides its clients, as a pure state machine on the edge's
/// clock: the channel activities held until the link to the room-coordinators takes them
/// (bounded: the oldest dropped beyond ``maxHeldActivities``), when the channel summary is due
/// (every second, and soon after a change), and when the load (channel and connection counts)
/// goes to the gossip (on a change, at most every ``loadReportInterval``: each change raises the
/// member's incarnation and reaches every member, and a burst of joins changes it every tick).
public struct EdgeReportBook: Sendable {
    /// Activities held at most while no link takes them.
    public let maxHeldActivities: Int
    /// Least time between two load reports.
    public let loadReportInterval: Duration
    private var activities: [RoomChannelActivity] = []
    private var overflowing = false
    private var channelsChanged = false
    private var lastSummary: Duration?
    private var reportedLoad = (channels: -1, connections: -1)
    private var loadReportedAt: Duration?

    /// An empty book.
    public init(maxHeldActivities: Int = 50_000, loadReportInterval: Duration = .milliseconds(250)) {
        self.maxHeldActivities = maxHeldActivities
        self.loadReportInterval = loadReportInterval
    }

    /// Holds an activity (its time already on the wall clock) for the link; the channels changed.
    ///
    /// - Returns: How many of the oldest were dropped, and whether this began an overflow (to
    ///   log once, not per activity).
    public mutating func hold(_ activity: RoomChannelActivity) -> (dropped: Int, overflowBegan: Bool) {
        activities.append(activity)
        channelsChanged = true
        let excess = activities.count - maxHeldActivities
        guard excess > 0 else { return (0, false) }
        activities.removeFirst(excess)
        defer { overflowing = true }
        return (excess, !overflowing)
    }

    /// The channels or their forwards changed: a summary is due soon.
    public mutating func channelsDidChange() { channelsChanged = true }

    /// A new link took over: it gets a summary at once.
    public mutating func linked() { lastSummary = nil }

    /// What to hand the link now: the activities held (taken out), and whether a summary is due
    /// (every second, or 100 ms after a change).
    public mutating func handOver(now: Duration) -> (activities: [RoomChannelActivity], summaryDue: Bool) {
        let taken = activities
        if !taken.isEmpty {
            activities.removeAll(keepingCapacity: true)
            overflowing = false
        }
        let age = lastSummary.map { now - $0 }
        guard age == nil || age! >= .seconds(1) || (channelsChanged && age! >= .milliseconds(100)) else { return (taken, false) }
        lastSummary = now
        channelsChanged = false
        return (taken, true)
    }

    /// The channel summaries as reported: the plane's, with each channel's forwarded publishers,
    /// for a relayed channel its origin edge, and the publishers `recordings` records here.
    public static func summaries(
        _ plane: [ChannelSummary], forwards: ForwardBook, relays: RelayBook, recordings: RecordingDesk? = nil
    ) -> [ChannelSummary] {
        var summaries = plane
        if !forwards.isEmpty {
            let byChannel = Dictionary(grouping: forwards.publishers, by: \.channel)
            for index in summaries.indices {
                summaries[index].forwardedPublishers = byChannel[summaries[index].name] ?? []
            }
        }
        if !relays.isEmpty {
            for index in summaries.indices {
                summaries[index].originEdge = relays.origin(of: summaries[index].name)?.id ?? ""
            }
        }
        if let recordings, !recordings.running.isEmpty {
            let recorded = recordings.recordedUIDs
            for index in summaries.indices { summaries[index].recording = recorded[summaries[index].name] ?? [] }
        }
        return summaries
    }

    /// Whether the load is to be reported now.
    public mutating func shouldReportLoad(channels: Int, connections: Int, now: Duration) -> Bool {
        guard (channels, connections) != reportedLoad, loadReportedAt.map({ now - $0 >= loadReportInterval }) ?? true else {
            return false
        }
        reportedLoad = (channels, connections)
        loadReportedAt = now
        return true
    }
}
