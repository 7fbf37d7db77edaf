internal import ShowroomWire
internal import ZeroMQ

/// The room registry of a cluster (the seeds' app service layer): create, list, join and close
/// rooms, chat in them, and follow what happens in one.
///
/// Requests go to an alive room coordinator learned from the seeds (the room's owner first, the
/// next one on `UNAVAILABLE` / `DEADLINE_EXCEEDED`); refusals come back with their codes
/// (`ROOM_NOT_FOUND` 4000, `NOT_ROOM_OWNER` 4001, `ROOM_CLOSED` 4003 …), and `NO_COORDINATOR`
/// 4007 when the cluster has none alive. Sockets live on the engine's loop
/// (``ShowroomEngine/loop``); the methods never block the caller's thread.
///
/// ```swift
/// let rooms = RoomService(seeds: ["tcp://10.0.0.5:7100"], loop: engine.loop)
/// let room = try await rooms.createRoom(name: "Friday show", ownerUid: 1)
/// for await event in rooms.events(for: room.roomID) { ... }
/// ```
public final class RoomService: Sendable {
    /// How often ``events(for:)`` looks for coordinators it is not connected to yet.
    public static let coordinatorRefreshInterval = Duration.seconds(2)

    /// The loop the service's sockets live on.
    public let loop: EngineLoop
    let client: MemberClient
    private let hub: LoopConfined<RoomNoticeHub>

    /// Creates a service; nothing is sent before the first call.
    ///
    /// - Parameters:
    ///   - seeds: Cluster endpoints of any members (`tcp://host:port`).
    ///   - loop: The loop its sockets live on: an engine's (``ShowroomEngine/loop``).
    ///   - timeout: How long to wait for a seed or a coordinator.
    public init(seeds: [String], loop: EngineLoop, timeout: Duration = .seconds(3)) {
        self.loop = loop
        let client = MemberClient(
            directory: ClusterDirectory(seeds: seeds, loop: loop, timeout: timeout, cacheDuration: Self.coordinatorRefreshInterval),
            timeout: timeout)
        self.client = client
        let eventLoop = loop.eventLoop
        let context = loop.context
        hub = LoopConfined(loop: eventLoop) {
            RoomNoticeHub(loop: eventLoop, context: context) {
                (try? await client.members())?.map(\.eventsEndpoint).filter { !$0.isEmpty }
            }
        }
    }

    // MARK: - Rooms

    /// Creates a room and makes `ownerUid` its owner (the host).
    ///
    /// - Parameters:
    ///   - name: What the room is called.
    ///   - ownerUid: The host's uid.
    ///   - ownerName: The host's display name.
    ///   - ownerAvatar: The host's avatar URL.
    ///   - roomID: The room id; empty lets the coordinator make one.
    ///   - channel: The RTC channel of the show; empty means the room id.
    ///   - seats: Co-host seats, 1 – 8.
    /// - Returns: The new room.
    /// - Throws: `ROOM_EXISTS` (4004) for a taken id, `INVALID_ARGUMENT` for a bad field.
    public func createRoom(
        name: String, ownerUid: UInt32, ownerName: String = "", ownerAvatar: String = "", roomID: String = "", channel: String = "",
        seats: UInt32 = 1
    ) async throws(ShowroomError) -> Room {
        var request = RoomCreateRoomRequest()
        request.name = name
        request.ownerUid = ownerUid
        request.ownerName = ownerName
        request.ownerAvatar = ownerAvatar
        request.roomID = roomID
        request.channel = channel
        request.seats = seats
        return Room(try await client.request(.roomCreate, body: request, key: roomID, expecting: RoomCreateRoomResponse.self).room)
    }

    /// One page of the open rooms, newest first.
    ///
    /// - Parameters:
    ///   - pageSize: Rooms per page, 1–100.
    ///   - pageToken: The previous page's `nextPageToken`; empty for the first page.
    /// - Returns: The page, the next page's token (empty on the last) and the total.
    public func listRooms(pageSize: Int = 20, pageToken: String = "") async throws(ShowroomError) -> RoomPage {
        guard (1...100).contains(pageSize) else {
            throw .invalidArgument("page size \(pageSize) is out of range: ask for 1 to 100 rooms per page")
        }
        var request = RoomListRoomsRequest()
        request.pageSize = UInt32(pageSize)
        request.pageToken = pageToken
        return RoomPage(try await client.request(.roomList, body: request, key: "", expecting: RoomListRoomsResponse.self))
    }

    /// A room, open or closed.
    ///
    /// - Throws: `ROOM_NOT_FOUND` (4000).
    public func room(_ roomID: String) async throws(ShowroomError) -> Room {
        var request = RoomGetRoomRequest()
        request.roomID = roomID
        return Room(try await client.request(.roomGet, body: request, key: roomID, expecting: RoomGetRoomResponse.self).room)
    }

    /// Enters a room as audience (idempotent per uid).
    ///
    /// - Returns: The room with its new audience count.
    /// - Throws: `ROOM_NOT_FOUND` (4000), `ROOM_CLOSED` (4003).
    public func joinRoom(_ roomID: String, uid: UInt32, userName: String = "") async throws(ShowroomError) -> Room {
        var request = RoomJoinRoomRequest()
        request.roomID = roomID
        request.uid = uid
        request.userName = userName
        return Room(try await client.request(.roomJoin, body: request, key: roomID, expecting: RoomJoinRoomResponse.self).room)
    }

    /// Leaves a room (idempotent per uid).
    ///
    /// - Returns: The room with its new audience count.
    public func leaveRoom(_ roomID: String, uid: UInt32) async throws(ShowroomError) -> Room {
        var request = RoomLeaveRoomRequest()
        request.roomID = roomID
        request.uid = uid
        return Room(try await client.request(.roomLeave, body: request, key: roomID, expecting: RoomLeaveRoomResponse.self).room)
    }

    /// Closes a room; only its owner may.
    ///
    /// - Returns: The closed room.
    /// - Throws: `NOT_ROOM_OWNER` (4001), `ROOM_NOT_FOUND` (4000).
    public func closeRoom(_ roomID: String, uid: UInt32) async throws(ShowroomError) -> Room {
        var request = RoomCloseRoomRequest()
        request.roomID = roomID
        request.uid = uid
        return Room(try await client.request(.roomClose, body: request, key: roomID, expecting: RoomCloseRoomResponse.self).room)
    }

    /// Sends a chat message to the room.
    ///
    /// - Returns: The message with its sequence number and time.
    /// - Throws: `CHAT_MESSAGE_TOO_LARGE` (4002) past 1024 bytes, `ROOM_CLOSED` (4003).
    public func sendMessage(_ roomID: String, uid: UInt32, userName: String = "", text: String) async throws(ShowroomError) -> ChatMessage {
        guard text.utf8.count <= 1024 else {
            throw ShowroomError(.chatMessageTooLarge, "the message is \(text.utf8.count) bytes; a chat message holds at most 1024 bytes of UTF-8")
        }
        var request = RoomSendChatRequest()
        request.roomID = roomID
        request.uid = uid
        request.userName = userName
        request.text = text
        return ChatMessage(try await client.request(.roomChatSend, body: request, key: roomID, expecting: RoomSendChatResponse.self).message)
    }

    /// The most recent chat messages, oldest first.
    ///
    /// - Parameters:
    ///   - roomID: The room.
    ///   - limit: At most this many, 1–100.
    ///   - after: Only messages with a higher sequence number.
    public func messages(in roomID: String, limit: Int = 50, after: UInt64 = 0) async throws(ShowroomError) -> [ChatMessage] {
        guard (1...100).contains(limit) else {
            throw .invalidArgument("limit \(limit) is out of range: ask for 1 to 100 messages")
        }
        var request = RoomChatHistoryRequest()
        request.roomID = roomID
        request.limit = UInt32(limit)
        request.afterSequence = after
        return try await client.request(.roomChatHistory, body: request, key: roomID, expecting: RoomChatHistoryResponse.self).messages
            .map(ChatMessage.init)
    }

    // MARK: - Events

    /// What happens in a room from now on: ``RoomEvent/userCountChanged(_:)``,
    /// ``RoomEvent/messageAdded(_:)``, and last ``RoomEvent/roomExpired(_:)`` or
    /// ``RoomEvent/roomDestroyed(_:)``, after which the stream finishes (it also finishes when
    /// the consumer stops, or at ``shutdown()``).
    ///
    /// The first event is ``RoomEvent/snapshot(_:)``: the room as it is once the subscription is
    /// set up; later room events older than it (by ``Room/version``) are left out. Notices come
    /// from every alive coordinator's events endpoint (new coordinators are connected within
    /// ``coordinatorRefreshInterval``); one published twice (by two coordinators around a
    /// failover) is delivered once. A room that cannot be read (unknown, no coordinator) gets no
    /// snapshot.
    ///
    /// - Parameter roomID: The room.
    public func events(for roomID: String) -> AsyncStream<RoomEvent> {
        let (notices, continuation) = AsyncStream<RoomEvent>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        let hub = self.hub
        let eventLoop = loop.eventLoop
        eventLoop.execute {
            let id = hub.value.add(roomID: roomID, continuation)
            continuation.onTermination = { _ in eventLoop.execute { hub.value.remove(id) } }
        }
        return AsyncStream(bufferingPolicy: .bufferingNewest(1000)) { output in
            let forwarding = Task {
                // Subscribed first, read second: nothing published in between is missed.
                var floor: UInt64 = 0
                if let room = try? await self.room(roomID) {
                    output.yield(.snapshot(room))
                    floor = room.version
                }
                for await event in notices {
                    if let version = event.roomVersion, version <= floor { continue }
                    output.yield(event)
                }
                output.finish()
            }
            output.onTermination = { _ in forwarding.cancel() }
        }
    }

    /// Closes the service's sockets and finishes every event stream; calls in flight fail with
    /// `UNAVAILABLE`. The loop keeps running (it may be shared).
    public func shutdown() async {
        let hub = self.hub
        _ = try? await loop.perform { (complete: @escaping (Result<Void, ShowroomError>) -> Void) in
            hub.value.close()
            complete(.success(()))
        }
        await client.close()
    }
}

/// The SUB socket of a room service and the event streams reading from it; confined to the loop.
final class RoomNoticeHub {
    private struct Stream {
        let roomID: String
        let continuation: AsyncStream<RoomEvent>.Continuation
        var seen: Set<String> = []
        var seenOrder: [String] = []
    }

    /// Identities remembered per stream to drop duplicates; a failover repeats only recent ones.
    private static let seenLimit = 512

    private let loop: EventLoop
    private let context: Context
    private let findEndpoints: @Sendable () async -> [String]?
    private var socket: Socket?
    private var connected: Set<String> = []
    private var streams: [UInt64: Stream] = [:]
    private var nextStreamID: UInt64 = 1
    private var refreshTimer: TimerID?
    private var isClosed = false

    init(loop: EventLoop, context: Context, findEndpoints: @escaping @Sendable () async -> [String]?) {
        self.loop = loop
        self.context = context
        self.findEndpoints = findEndpoints
    }

    /// Starts delivering the room's notices to `continuation`.
    func add(roomID: String, _ continuation: AsyncStream<RoomEvent>.Continuation) -> UInt64 {
        let id = nextStreamID
        nextStreamID += 1
        guard !isClosed, let socket = openSocket() else {
            continuation.finish()
            return id
        }
        streams[id] = Stream(roomID: roomID, continuation: continuation)
        // libzmq counts subscriptions: one per stream, dropped with it.
        try? socket.subscribe(Array(Self.topic(roomID).utf8))
        if refreshTimer == nil {
            refresh()
            refreshTimer = loop.scheduleRepeating(every: RoomService.coordinatorRefreshInterval) { [weak self] in self?.refresh() }
        }
        return id
    }

    /// Stops a stream (its consumer stopped, or it ended).
    func remove(_ id: UInt64) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        try? socket?.set(.unsubscribe, bytes: Array(Self.topic(stream.roomID).utf8))
        stream.continuation.finish()
        if streams.isEmpty, let timer = refreshTimer {
            loop.cancelTimer(timer)
            refreshTimer = nil
        }
    }

    /// Finishes every stream and closes the socket.
    func close() {
        isClosed = true
        for id in streams.keys.sorted() { remove(id) }
        if let socket {
            loop.unregister(socket)
            socket.close()
        }
        socket = nil
        connected = []
    }

    static func topic(_ roomID: String) -> String { "room/\(roomID)" }

    private func openSocket() -> Socket? {
        if let socket { return socket }
        guard let made = try? Socket(.sub, context: context) else { return nil }
        try? made.set(.receiveHighWaterMark, 10_000)
        socket = made
        loop.register(made) { [weak self] socket, _ in self?.receive(on: socket) }
        return made
    }

    /// Looks up the alive coordinators (off the loop) and connects to the new ones.
    private func refresh() {
        let find = findEndpoints
        let loop = self.loop
        let weakSelf = WeakLoopReference(self)
        Task {
            guard let endpoints = await find() else { return }
            loop.execute { weakSelf.object?.connect(to: endpoints) }
        }
    }

    private func connect(to endpoints: [String]) {
        guard !isClosed, let socket else { return }
        let wanted = Set(endpoints)
        for endpoint in wanted.subtracting(connected).sorted() where (try? socket.connect(endpoint)) != nil {
            connected.insert(endpoint)
        }
        // Coordinators gone from the membership: stop reconnecting to them.
        for endpoint in connected.subtracting(wanted).sorted() {
            try? socket.disconnect(endpoint)
            connected.remove(endpoint)
        }
    }

    private func receive(on socket: Socket) {
        while let frames = try? socket.receiveFrames() {
            guard frames.count == 2,
                  let envelope = try? WireEnvelope.decode(frame: frames[1]), envelope.kind == .roomNotice,
                  let notice = try? envelope.decodeBody(RoomRoomNotice.self),
                  let event = RoomEvent(notice)
            else { continue }
            // Topics match by prefix ("room/ab" also gets "room/abc"): deliver on the exact id.
            let topic = String(decoding: frames[0], as: UTF8.self)
            let identity = RoomEvent.identity(of: notice)
            for id in streams.keys.sorted() {
                guard var stream = streams[id], Self.topic(stream.roomID) == topic,
                      stream.seen.insert(identity).inserted
                else { continue }
                stream.seenOrder.append(identity)
                if stream.seenOrder.count > Self.seenLimit {
                    stream.seen.remove(stream.seenOrder.removeFirst())
                }
                streams[id] = stream
                stream.continuation.yield(event)
                if event.endsRoom { remove(id) }
            }
        }
    }
}
