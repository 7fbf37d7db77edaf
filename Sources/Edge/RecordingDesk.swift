import ShowroomWire

/// What an edge records, as a pure value: the coordinators' recording orders (each
/// coordinator's whole set, forgotten when it has not been heard for ``forgetAfter``) and the
/// publishers being recorded here. An edge records the publishers that publish on it: a channel
/// split over edges is recorded where each publisher sends its media, and a recording follows its
/// publisher to another edge (a drain, a failover) as a new recording there; relayed copies are
/// never recorded. A PK peer forwarded into a channel is recorded only when an order names it.
///
/// The shell asks ``frame(channel:uid:forwarded:now:)`` for every media frame while the desk is
/// not ``isIdle`` and carries out the ``Action``s (start or stop a recording, ask for a keyframe).
public struct RecordingDesk: Sendable {
    /// One recording order, checked (``EdgeCodec/recordingOrders(_:)``).
    public struct Order: Sendable, Hashable {
        /// The order's id.
        public var id: String
        /// The channel recorded, or empty with ``channelPrefix`` set.
        public var channel: String
        /// Every channel whose name begins with it is recorded (a rule such as every 1v1 call).
        public var channelPrefix: String
        /// The publishers recorded; empty: every broadcaster publishing on the edge.
        public var uids: Set<UInt32>
        /// The segment length in seconds; 0: the edge's default.
        public var segmentSeconds: UInt32

        /// An order of `id` for `channel` (or every channel beginning with `channelPrefix`).
        public init(id: String, channel: String = "", channelPrefix: String = "", uids: Set<UInt32> = [], segmentSeconds: UInt32 = 0) {
            self.id = id
            self.channel = channel
            self.channelPrefix = channelPrefix
            self.uids = uids
            self.segmentSeconds = segmentSeconds
        }

        /// Whether it records `uid` in `channel`: a forwarded peer only when named.
        public func covers(channel name: String, uid: UInt32, forwarded: Bool) -> Bool {
            guard channel.isEmpty ? name.hasPrefix(channelPrefix) : name == channel else { return false }
            return uids.isEmpty ? !forwarded : uids.contains(uid)
        }
    }

    /// A publisher in a channel: one recording at a time.
    public struct Key: Sendable, Hashable, Comparable {
        public var channel: String
        public var uid: UInt32

        public init(channel: String, uid: UInt32) {
            self.channel = channel
            self.uid = uid
        }

        public static func < (a: Key, b: Key) -> Bool { (a.channel, a.uid) < (b.channel, b.uid) }
    }

    /// A recording running here.
    public struct Run: Sendable, Equatable {
        /// The order it records for.
        public var orderID: String
        /// Whether its frames come over a forward link (a PK peer).
        public var forwarded: Bool
        /// When its last frame arrived.
        public var lastFrame: Duration
    }

    /// What the shell carries out.
    public enum Action: Sendable, Equatable {
        /// Start recording `key` for `orderID` (segments of `segmentSeconds`, 0: the default) and
        /// ask its publisher for a keyframe: a file starts on one.
        case start(Key, orderID: String, segmentSeconds: UInt32)
        /// Stop recording `key`: its open file is finished.
        case stop(Key)
    }

    /// What to do with one frame.
    public enum FrameDecision: Sendable, Equatable {
        /// Not recorded.
        case skip
        /// Hand it to the recording running.
        case record
        /// Start the recording (``Action/start(_:orderID:segmentSeconds:)``), then hand it over.
        case start(orderID: String, segmentSeconds: UInt32)
    }

    /// Each coordinator's orders and when they were last heard.
    private var orders: [String: (orders: [Order], heard: Duration)] = [:]
    /// The version of each coordinator's latest set: an older one arriving later is ignored.
    private var versions: [String: UInt64] = [:]
    /// The most coordinators whose versions are kept (the oldest forgotten past it).
    static let maxCoordinators = 256
    /// The recordings running here.
    public private(set) var running: [Key: Run] = [:]
    /// Publishers found not covered by any order, so that their frames cost one lookup; cleared
    /// whenever the orders change.
    private var uncovered: Set<Key> = []
    /// Recordings that failed (a full disk, say): not started again until the orders change.
    private var failed: Set<Key> = []
    /// A coordinator's orders not heard again for this long are forgotten (it died, or was cut off).
    public let forgetAfter: Duration
    /// A recording with no frame for this long is stopped (the publisher went quiet); its next
    /// frame starts a new one.
    public let idleAfter: Duration

    /// An empty desk.
    public init(forgetAfter: Duration = .seconds(10), idleAfter: Duration = .seconds(30)) {
        self.forgetAfter = forgetAfter
        self.idleAfter = idleAfter
    }

    /// No order and no recording: frames need not be looked at.
    public var isIdle: Bool { orders.isEmpty && running.isEmpty }

    /// The orders held, from every coordinator, by id.
    public var allOrders: [String: Order] {
        var all: [String: Order] = [:]
        for (_, set) in orders { for order in set.orders { all[order.id] = order } }
        return all
    }

    /// The publishers recorded here now, by channel, sorted (one pass for a whole summary).
    public var recordedUIDs: [String: [UInt32]] {
        var byChannel: [String: [UInt32]] = [:]
        for key in running.keys { byChannel[key.channel, default: []].append(key.uid) }
        return byChannel.mapValues { $0.sorted() }
    }

    /// `coordinator`'s orders are now `orders` (all of them; empty: none), unless a later
    /// `version` of them arrived first. Recordings no order covers any more are stopped.
    public mutating func setOrders(_ orders: [Order], from coordinator: String, version: UInt64 = 0, now: Duration) -> [Action] {
        if let last = versions[coordinator], version != 0, version <= last { return [] }
        if version != 0 {
            if versions[coordinator] == nil, versions.count >= Self.maxCoordinators, let idle = versions.keys.first(where: { self.orders[$0] == nil }) {
                versions[idle] = nil
            }
            versions[coordinator] = version
        }
        let before = self.orders[coordinator]?.orders
        if orders.isEmpty { self.orders[coordinator] = nil } else { self.orders[coordinator] = (orders, now) }
        guard before != orders else { return [] }
        return ordersChanged()
    }

    /// The decision for one media frame of `uid` in `channel` (`forwarded`: over a forward link).
    public mutating func frame(channel: String, uid: UInt32, forwarded: Bool, now: Duration) -> FrameDecision {
        let key = Key(channel: channel, uid: uid)
        if let index = running.index(forKey: key) {
            running.values[index].lastFrame = now
            return .record
        }
        guard !uncovered.contains(key) else { return .skip }
        guard !failed.contains(key), let order = order(covering: key, forwarded: forwarded) else {
            uncovered.insert(key)
            return .skip
        }
        running[key] = Run(orderID: order.id, forwarded: forwarded, lastFrame: now)
        return .start(orderID: order.id, segmentSeconds: order.segmentSeconds)
    }

    /// Whether a recording that starts at the frame `info` asks its publisher for a keyframe: a
    /// file starts on one, so anything but a video keyframe asks now rather than wait for the next.
    public static func startAsksKeyframe(at info: MediaFrameInfo) -> Bool { info.kind != .video || !info.isKeyframe }

    /// `uid` stopped publishing in `channel` here (it left, became audience, or moved away).
    public mutating func publisherLeft(channel: String, uid: UInt32) -> [Action] {
        let key = Key(channel: channel, uid: uid)
        uncovered.remove(key)
        return running.removeValue(forKey: key) == nil ? [] : [.stop(key)]
    }

    /// Stops every recording (the edge drains or stops); orders still held start them again on
    /// their next frames.
    public mutating func stopAll() -> [Action] {
        let keys = running.keys.sorted()
        running = [:]
        uncovered = []
        return keys.map { .stop($0) }
    }

    /// The recording of `key` failed; it is not started again until the orders change.
    ///
    /// - Returns: The order it ran for, if it was running (the failure's activity names it).
    @discardableResult
    public mutating func failed(_ key: Key) -> String? {
        failed.insert(key)
        return running.removeValue(forKey: key)?.orderID
    }

    /// A channel activity of this edge's: a publisher that leaves or becomes audience ends its
    /// recording here (its file is finished); anything else changes nothing.
    public mutating func see(_ activity: ChannelActivity) -> [Action] {
        guard activity.kind == .broadcasterLeft || activity.kind == .roleToAudience else { return [] }
        return publisherLeft(channel: activity.channel, uid: activity.uid)
    }

    /// Forgets the orders of coordinators not heard for ``forgetAfter`` and stops recordings that
    /// lost their order or had no frame for ``idleAfter``.
    public mutating func tick(now: Duration) -> [Action] {
        var actions: [Action] = []
        let stale = orders.filter { now - $0.value.heard >= forgetAfter }.map(\.key)
        if !stale.isEmpty {
            for coordinator in stale { orders[coordinator] = nil }
            actions += ordersChanged()
        }
        for key in running.keys.sorted() where now - running[key]!.lastFrame >= idleAfter {
            running[key] = nil
            actions.append(.stop(key))
        }
        return actions
    }

    /// The order covering `key`: the first by id, so every edge picks the same.
    private func order(covering key: Key, forwarded: Bool) -> Order? {
        var best: Order?
        for (_, set) in orders {
            for order in set.orders where order.covers(channel: key.channel, uid: key.uid, forwarded: forwarded) {
                if best == nil || order.id < best!.id { best = order }
            }
        }
        return best
    }

    private mutating func ordersChanged() -> [Action] {
        uncovered = []
        failed = []
        var actions: [Action] = []
        for key in running.keys.sorted() {
            let run = running[key]!
            guard let order = order(covering: key, forwarded: run.forwarded) else {
                running[key] = nil
                actions.append(.stop(key))
                continue
            }
            running[key]!.orderID = order.id
        }
        return actions
    }
}

extension EdgeCodec {
    /// The most orders one coordinator sends.
    public static let maxRecordingOrders = 1_000

    /// The orders of an `EDGE_RECORDINGS` request, checked. All or nothing.
    ///
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` for a request naming no coordinator (or one
    ///   over 128 bytes), more than ``maxRecordingOrders`` orders, an id that is empty or over 64
    ///   bytes, neither or both of a channel and a prefix, an invalid channel name or prefix, more
    ///   than 32 uids, or a segment length outside 60–86400 s.
    public static func recordingOrders(_ request: RoomEdgeRecordingsRequest) throws(ShowroomError) -> [RecordingDesk.Order] {
        // The orders are kept per coordinator: each one's whole set replaces its last.
        guard !request.coordinator.isEmpty, request.coordinator.utf8.count <= 128 else {
            throw .invalidArgument("an EDGE_RECORDINGS request names its coordinator (1 to 128 bytes)")
        }
        guard request.orders.count <= maxRecordingOrders else {
            throw .invalidArgument("a coordinator sends at most \(maxRecordingOrders) recording orders, not \(request.orders.count)")
        }
        return try request.orders.map { (order) throws(ShowroomError) -> RecordingDesk.Order in
            let id = String(order.id.prefix(64))
            guard !order.id.isEmpty, order.id.utf8.count <= 64 else {
                throw .invalidArgument("recording order id '\(id)' must be 1 to 64 bytes")
            }
            guard order.channel.isEmpty != order.channelPrefix.isEmpty else {
                throw .invalidArgument("recording order \(id) names a channel or a channel prefix, one of them")
            }
            if !order.channel.isEmpty {
                try Names.validateChannel(order.channel)
            } else if !Names.isValidChannel(order.channelPrefix) {
                throw .invalidArgument("recording order \(id): the channel prefix is not the start of a valid channel name")
            }
            guard order.uids.count <= 32 else {
                throw .invalidArgument("recording order \(id) names \(order.uids.count) uids; at most 32")
            }
            guard order.segmentSeconds == 0 || (60...86_400).contains(order.segmentSeconds) else {
                throw .invalidArgument("recording order \(id): segments of \(order.segmentSeconds) s; 60 to 86400, or 0 for the default")
            }
            return RecordingDesk.Order(id: order.id, channel: order.channel, channelPrefix: order.channelPrefix,
                                       uids: Set(order.uids), segmentSeconds: order.segmentSeconds)
        }
    }
}
