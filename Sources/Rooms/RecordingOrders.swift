// Pure: no I/O.
import ShowroomWire

/// What the cluster's configuration records without being asked: every 1v1 call, and the live
/// rooms of given owners.
public struct RecordingRules: Sendable, Equatable {
    /// Record both sides of every 1v1 call (channels `call-…`).
    public var calls: Bool
    /// Record the rooms these uids own, while they are open.
    public var owners: Set<UInt32>

    /// Rules recording `calls` and the rooms of `owners`.
    public init(calls: Bool = false, owners: Set<UInt32> = []) {
        self.calls = calls
        self.owners = owners
    }

    /// The id of the calls rule's order.
    public static let callsOrderID = "rule-calls"
    /// The channel prefix of 1v1 calls.
    public static let callChannelPrefix = "call-"

    /// The id of the order recording room `roomID` by the owners rule.
    public static func roomOrderID(_ roomID: String) -> String { "rule-room-\(roomID)" }
}

/// The recordings a coordinator keeps, as a pure value: those the server API started (running, or
/// stopped and kept for queries), the rules' orders, the files each recording's edges finished
/// (from the channel's numbered events), and when the edges are to be sent the orders again.
///
/// The channel's owner starts, stops and files a recording, raising its version each time, and
/// every coordinator holds a copy (``held``, ``merge(_:)``): when the owner dies the channel's next
/// owner sends the same orders, so the edges go on recording under the same id, in the same file.
/// The rules' recordings are made again by every owner.
public struct RecordingOrders: Sendable {
    /// Recordings kept, running and stopped, by id.
    public private(set) var recordings: [String: RoomRecording] = [:]
    /// Stopped recordings, oldest first: the oldest are forgotten past ``maxStopped``.
    private var stoppedOrder: [String] = []
    /// The orders last sent to the edges.
    private var sent: [RoomRecordingOrder] = []
    private var ticksSinceSent = 0
    /// How many more times the empty set is to be sent.
    private var emptyLeft = 0
    /// The version of the orders last sent.
    private var version: UInt64 = 0

    /// The most recordings running at once in the cluster.
    public static let maxRunning = 500
    /// The most stopped recordings kept for queries.
    public static let maxStopped = 1_000
    /// The most files kept per recording (the latest).
    public static let maxFiles = 100
    /// The most uids one recording names.
    public static let maxUIDs = 32
    /// The orders go to every edge this often (in ticks) while there are any, so that an edge that
    /// started since or missed one catches up and keeps them.
    public static let refreshTicks = 2
    /// How many times the empty set goes out once the last order is gone.
    public static let emptyRepeats = 3

    /// No recording.
    public init() {}

    /// Starts recording `request.uids` (every broadcaster when empty) of `channel`, as `id`.
    ///
    /// - Throws: `INVALID_ARGUMENT` for a bad channel name, more than ``maxUIDs`` uids, uid 0, or a
    ///   segment length outside 60–86400 s; `RECORDING_CONFLICT` when a recording of the same
    ///   publishers of the channel runs; `RATE_LIMITED` past ``maxRunning`` running recordings.
    public mutating func start(channel: String, _ request: RoomRecordingStart, id: String, nowMs: Int64) throws(ShowroomError) -> RoomRecording {
        try Names.validateChannel(channel)
        guard request.uids.count <= Self.maxUIDs else {
            throw .invalidArgument("a recording names at most \(Self.maxUIDs) uids, not \(request.uids.count); leave them out to record every broadcaster")
        }
        guard !request.uids.contains(0) else { throw .invalidArgument("uid 0 is nobody; name the publishers' uids") }
        guard request.segmentSeconds == 0 || (60...86_400).contains(request.segmentSeconds) else {
            throw .invalidArgument("segment_seconds must be 60 to 86400, not \(request.segmentSeconds)")
        }
        let uids = Array(Set(request.uids)).sorted()
        let running = recordings.values.filter { $0.stoppedMs == 0 }
        if let same = running.first(where: { $0.channel == channel && $0.uids == uids }) {
            throw ShowroomError(.recordingConflict, "recording \(same.id) of \(uids.isEmpty ? "every broadcaster" : "uids \(uids)") in channel \(channel) runs already; stop it first")
        }
        guard running.count < Self.maxRunning else {
            throw ShowroomError(.rateLimited, "\(Self.maxRunning) recordings run in the cluster already; stop one first")
        }
        let recording = RoomRecording.with {
            $0.id = id
            $0.channel = channel
            $0.uids = uids
            $0.startedMs = nowMs
            $0.segmentSeconds = request.segmentSeconds
            $0.version = 1
        }
        recordings[id] = recording
        return recording
    }

    /// Stops recording `id` of `channel` (a stopped one is answered as it is).
    ///
    /// - Throws: `RECORDING_NOT_FOUND` when the channel has no recording of that id here.
    public mutating func stop(channel: String, id: String, nowMs: Int64) throws(ShowroomError) -> RoomRecording {
        var recording = try get(channel: channel, id: id)
        guard recording.stoppedMs == 0 else { return recording }
        recording.stoppedMs = max(nowMs, recording.startedMs)
        recording.version &+= 1
        recordings[id] = recording
        keepStopped(id)
        return recording
    }

    /// Counts `id` among the stopped ones kept, forgetting the oldest past ``maxStopped``.
    private mutating func keepStopped(_ id: String) {
        stoppedOrder.append(id)
        if stoppedOrder.count > Self.maxStopped { recordings[stoppedOrder.removeFirst()] = nil }
    }

    /// Recording `id` of `channel`.
    ///
    /// - Throws: `RECORDING_NOT_FOUND` when the channel has no recording of that id here.
    public func get(channel: String, id: String) throws(ShowroomError) -> RoomRecording {
        guard let recording = recordings[id], recording.channel == channel else {
            throw ShowroomError(.recordingNotFound, "channel \(channel) has no recording \(id.prefix(64)) (never started here, or forgotten long after it stopped)")
        }
        return recording
    }

    /// The recordings of `channel`, newest first.
    public func list(channel: String) -> [RoomRecording] {
        recordings.values.filter { $0.channel == channel }.sorted { ($0.startedMs, $0.id) > ($1.startedMs, $1.id) }
    }

    /// A numbered channel event: a finished file of one of these recordings is kept with it.
    /// Returns the recording it changed, to replicate (nil: none).
    @discardableResult
    public mutating func saw(_ event: RoomChannelEvent) -> RoomRecording? {
        guard event.type == .recordingFile || event.type == .recordingFailed,
              var recording = recordings[event.recording.recordingID], recording.channel == event.channel else { return nil }
        var file = event.recording
        file.edge = event.edge
        if event.type == .recordingFailed { file.path = "" }
        recording.files.append(file)
        if recording.files.count > Self.maxFiles { recording.files.removeFirst(recording.files.count - Self.maxFiles) }
        recording.version &+= 1
        recordings[recording.id] = recording
        return recording
    }

    // MARK: - Copies on every coordinator

    /// Every recording kept, by id: what a newcomer or a catch-up is sent.
    public var held: [RoomRecording] { recordings.values.sorted { $0.id < $1.id } }

    /// Takes the copies of `incoming` (from another coordinator) that are newer than the ones held:
    /// a higher version, or the same version stopped where the copy here runs. A malformed copy (a
    /// bad channel or id, too many uids) is left out; a copy's files are cut to ``maxFiles``.
    /// Returns the copies taken.
    public mutating func merge(_ incoming: [RoomRecording]) -> [RoomRecording] {
        var taken: [RoomRecording] = []
        var running = recordings.values.lazy.filter { $0.stoppedMs == 0 }.count
        for var copy in incoming {
            guard (1...64).contains(copy.id.utf8.count), (try? Names.validateChannel(copy.channel)) != nil,
                  copy.uids.count <= Self.maxUIDs, copy.recordingUids.count <= Self.maxUIDs else { continue }
            let held = recordings[copy.id]
            if let held {
                let newer = copy.version > held.version || (copy.version == held.version && copy.stoppedMs != 0 && held.stoppedMs == 0)
                guard newer, held.channel == copy.channel else { continue }
            } else if copy.stoppedMs == 0, running >= Self.maxRunning {
                continue
            }
            if copy.files.count > Self.maxFiles { copy.files.removeFirst(copy.files.count - Self.maxFiles) }
            recordings[copy.id] = copy
            if copy.stoppedMs != 0, held.map({ $0.stoppedMs == 0 }) ?? true { keepStopped(copy.id) }
            running += (copy.stoppedMs == 0 ? 1 : 0) - (held?.stoppedMs == 0 ? 1 : 0)
            taken.append(copy)
        }
        return taken
    }

    /// The orders the edges are to hold: the running API recordings of the channels this
    /// coordinator `owns`, and the rules' (the calls rule, and each open room `rooms` holds whose
    /// owner the rules name).
    public func orders(rules: RecordingRules, rooms: some Sequence<RoomRoom>, owns: (String) -> Bool = { _ in true }) -> [RoomRecordingOrder] {
        var orders: [RoomRecordingOrder] = recordings.values.filter { $0.stoppedMs == 0 && owns($0.channel) }.map { recording in
            RoomRecordingOrder.with {
                $0.id = recording.id
                $0.channel = recording.channel
                $0.uids = recording.uids
                $0.startedMs = recording.startedMs
                $0.segmentSeconds = recording.segmentSeconds
            }
        }
        if rules.calls {
            orders.append(RoomRecordingOrder.with {
                $0.id = RecordingRules.callsOrderID
                $0.channelPrefix = RecordingRules.callChannelPrefix
            })
        }
        if !rules.owners.isEmpty {
            for room in rooms where room.state == .open && rules.owners.contains(room.ownerUid) {
                orders.append(RoomRecordingOrder.with {
                    $0.id = RecordingRules.roomOrderID(room.roomID)
                    $0.channel = room.channel
                    $0.startedMs = room.createdAtMs
                })
            }
        }
        return orders.sorted { $0.id < $1.id }
    }

    /// One tick: the orders to send every edge now, if they changed since last sent or are due
    /// again (nil: nothing to send). While there are orders they go out every ``refreshTicks``;
    /// once none are left the empty set goes out ``emptyRepeats`` times that far apart (a lost one
    /// must not leave an edge recording until it forgets the set), then nothing.
    public mutating func due(_ orders: [RoomRecordingOrder]) -> [RoomRecordingOrder]? {
        ticksSinceSent += 1
        if orders != sent {
            emptyLeft = orders.isEmpty ? Self.emptyRepeats - 1 : 0
        } else if ticksSinceSent < Self.refreshTicks || (orders.isEmpty && emptyLeft == 0) {
            return nil
        } else if orders.isEmpty {
            emptyLeft -= 1
        }
        sent = orders
        ticksSinceSent = 0
        return orders
    }

    /// The version of the orders sent at `nowMs`: above every earlier one (also across a restart,
    /// by the clock), so an edge takes no older set after a newer one.
    public mutating func nextVersion(nowMs: Int64) -> UInt64 {
        version = max(version &+ 1, UInt64(clamping: nowMs))
        return version
    }

    /// Checks the recorded files an edge's report carries, before any of it is numbered: only
    /// events 121 and 122 carry one (and they must), with bounded strings, a path inside the
    /// recordings directory and the codecs recordings have.
    ///
    /// - Throws: `INVALID_ARGUMENT` naming the activity that is not so.
    public static func check(_ activities: [RoomChannelActivity]) throws(ShowroomError) {
        for (index, activity) in activities.enumerated() {
            let isRecording = activity.type == .recordingFile || activity.type == .recordingFailed
            guard isRecording == activity.hasRecording else {
                throw .invalidArgument("activity \(index + 1) (type \(activity.type.rawValue)) \(isRecording ? "lacks" : "carries") a recorded file")
            }
            guard isRecording else { continue }
            let file = activity.recording
            let path = file.path.split(separator: "/", omittingEmptySubsequences: false)
            guard file.recordingID.utf8.count <= 64, file.path.utf8.count <= 512, file.failure.utf8.count <= 1024,
                  file.edge.utf8.count <= 128, !file.path.hasPrefix("/"), !path.contains(".."),
                  file.codecs.count <= 2, file.codecs.allSatisfy({ $0 == "vp8" || $0 == "opus" }) else {
                throw .invalidArgument("activity \(index + 1): the recorded file of uid \(activity.uid) is malformed (id, path, codecs or failure)")
            }
        }
    }
}
