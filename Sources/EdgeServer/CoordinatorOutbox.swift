import DequeModule
import Routing
import ShowroomWire

/// What an edge owes the room-coordinators, as a pure state machine: channel activities, each for
/// the coordinator that owns its channel, and the channel summary for every coordinator.
///
/// The shell adds activities and summaries as the plane produces them, asks ``due(coordinators:now:)``
/// on a timer for the requests to send, and reports each request's fate with
/// ``completed(_:delivered:now:)``. Guarantees:
/// - **Order per channel.** Activities of a channel go out in the order they were added: a
///   channel with a request in flight sends nothing more until it is answered, and a failed
///   request's activities go back to the front of the queue.
/// - **Owner per attempt.** The owner (``OwnerRing/owner(of:)`` over the alive coordinators) is
///   computed each time an activity is sent, so a retry after a failure goes to
///   the channel's new owner if the coordinators changed.
/// - **Pacing.** One request in flight per coordinator, at most one every
///   ``Settings/minimumInterval``; after a failure, none to that coordinator for
///   ``Settings/retryDelay``.
/// - **Bounded.** At most ``Settings/maximumQueued`` activities wait; beyond that the oldest are
///   dropped and counted (``dropped``). Activities wait while no coordinator is alive.
///
/// Delivery is at least once: a request that timed out may have been handled, and is sent again.
struct CoordinatorOutbox {
    struct Settings {
        /// Activities kept waiting at most.
        var maximumQueued = 50_000
        /// Activities per request at most.
        var maximumBatch = 1_000
        /// Shortest time between two requests to the same coordinator.
        var minimumInterval: Duration = .milliseconds(50)
        /// Wait before sending to a coordinator again after a failed request.
        var retryDelay: Duration = .milliseconds(500)
    }

    /// One `EDGE_CHANNEL_REPORT` to send.
    struct Request: Equatable {
        /// Identifies the request in ``CoordinatorOutbox/completed(_:delivered:now:)``.
        var id: UInt64
        /// The coordinator's node id.
        var coordinator: String
        /// Activities in order (all for channels this coordinator owns).
        var activities: [RoomChannelActivity]
        /// The edge's channels, if a summary is due for this coordinator.
        var channels: [RoomChannelStatus]?
    }

    private struct Peer {
        var inFlight: UInt64?
        var nextSend: Duration = .zero
        /// The summary version it has (or is being sent).
        var summaryVersion: UInt64 = 0
    }

    private struct InFlight {
        var coordinator: String
        var activities: [RoomChannelActivity]
        var summaryVersion: UInt64?
        /// The summary version the coordinator had before this request.
        var previousSummaryVersion: UInt64
    }

    let settings: Settings
    private var queue = Deque<RoomChannelActivity>()
    private var peers: [String: Peer] = [:]
    private var inFlight: [UInt64: InFlight] = [:]
    /// Requests in flight per channel.
    private var busyChannels: [String: Int] = [:]
    private var summary: [RoomChannelStatus] = []
    private var summaryVersion: UInt64 = 0
    private var lastRequestID: UInt64 = 0
    /// Activities dropped because the queue was full.
    private(set) var dropped: UInt64 = 0

    init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Activities waiting to be sent (not counting those in flight).
    var queued: Int { queue.count }

    /// Activities in requests not answered yet.
    var inFlightCount: Int { inFlight.values.reduce(0) { $0 + $1.activities.count } }

    /// Adds activities, in order.
    ///
    /// - Returns: How many of the oldest were dropped to stay within the bound.
    mutating func add(_ activities: [RoomChannelActivity]) -> Int {
        queue.append(contentsOf: activities)
        return trim()
    }

    /// Sets the channel summary every coordinator is to get (sent with each coordinator's next
    /// request).
    mutating func setSummary(_ channels: [RoomChannelStatus]) {
        summary = channels
        summaryVersion += 1
    }

    /// The requests to send now.
    ///
    /// - Parameters:
    ///   - coordinators: The alive coordinators.
    ///   - now: The current clock value.
    /// - Returns: At most one request per coordinator.
    mutating func due(coordinators: OwnerRing, now: Duration) -> [Request] {
        guard !coordinators.isEmpty else { return [] }
        for id in peers.keys where !coordinators.contains(id) && peers[id]!.inFlight == nil {
            peers[id] = nil
        }
        var ready: Set<String> = []
        for id in coordinators.members {
            let peer = peers[id, default: Peer()]
            peers[id] = peer
            if peer.inFlight == nil, peer.nextSend <= now { ready.insert(id) }
        }
        guard !ready.isEmpty else { return [] }

        // Pick, in queue order, the activities each ready owner can take; keep the rest in order.
        var batches: [String: [RoomChannelActivity]] = [:]
        var owners: [String: String?] = [:]
        var kept = Deque<RoomChannelActivity>()
        var blocked: Set<String> = []
        while let activity = queue.popFirst() {
            let channel = activity.channel
            let owner = owners[channel] ?? {
                let owner = coordinators.owner(of: channel)
                owners[channel] = owner
                return owner
            }()
            if let owner, ready.contains(owner), busyChannels[channel] == nil, !blocked.contains(channel),
                batches[owner, default: []].count < settings.maximumBatch
            {
                batches[owner, default: []].append(activity)
            } else {
                // Everything later in this channel waits behind it.
                blocked.insert(channel)
                kept.append(activity)
            }
        }
        queue = kept

        var requests: [Request] = []
        for id in coordinators.members where ready.contains(id) {
            let activities = batches[id] ?? []
            let previous = peers[id]!.summaryVersion
            let sendsSummary = summaryVersion > previous
            guard !activities.isEmpty || sendsSummary else { continue }
            lastRequestID += 1
            let request = Request(
                id: lastRequestID, coordinator: id, activities: activities, channels: sendsSummary ? summary : nil)
            inFlight[request.id] = InFlight(
                coordinator: id, activities: activities, summaryVersion: sendsSummary ? summaryVersion : nil,
                previousSummaryVersion: previous)
            for activity in activities { busyChannels[activity.channel, default: 0] += 1 }
            peers[id]!.inFlight = request.id
            peers[id]!.nextSend = now + settings.minimumInterval
            if sendsSummary { peers[id]!.summaryVersion = summaryVersion }
            requests.append(request)
        }
        return requests
    }

    /// Records a request's fate. A failed request's activities go back to the front of the queue
    /// (to be sent to whoever owns their channel then), its summary is due again, and its
    /// coordinator rests for ``Settings/retryDelay``.
    ///
    /// - Parameters:
    ///   - id: The request's ``Request/id``.
    ///   - delivered: True if the coordinator accepted it.
    ///   - now: The current clock value.
    /// - Returns: How many of the oldest activities were dropped to stay within the bound.
    @discardableResult
    mutating func completed(_ id: UInt64, delivered: Bool, now: Duration) -> Int {
        guard let request = inFlight.removeValue(forKey: id) else { return 0 }
        for activity in request.activities {
            let count = busyChannels[activity.channel, default: 1] - 1
            busyChannels[activity.channel] = count > 0 ? count : nil
        }
        if peers[request.coordinator]?.inFlight == id { peers[request.coordinator]!.inFlight = nil }
        guard !delivered else { return 0 }
        queue.insert(contentsOf: request.activities, at: 0)
        if request.summaryVersion != nil, peers[request.coordinator] != nil {
            peers[request.coordinator]!.summaryVersion = min(
                peers[request.coordinator]!.summaryVersion, request.previousSummaryVersion)
        }
        peers[request.coordinator]?.nextSend = now + settings.retryDelay
        return trim()
    }

    /// Drops the oldest activities beyond the bound.
    private mutating func trim() -> Int {
        let excess = queue.count - settings.maximumQueued
        guard excess > 0 else { return 0 }
        queue.removeFirst(excess)
        dropped += UInt64(excess)
        return excess
    }
}
