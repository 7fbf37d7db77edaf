import Synchronization
internal import EdgeProtocol
internal import ShowroomWire
internal import ZeroMQ

/// The client engine (`AgoraRtcEngineKit` / `RTCEngine` in the seeds): joins channels on the
/// cluster's edges, publishes the local camera and microphone, receives remote media into sinks,
/// and reports everything on ``events``.
///
/// ```swift
/// let engine = try await ShowroomEngine(configuration: EngineConfiguration(entry: .seeds(["tcp://10.0.0.5:7100"])))
/// await engine.setLocalVideoSource(TestPatternCamera())
/// let connection = try await engine.joinChannel(token: token, channel: "room-1", uid: 42, options: .broadcaster)
/// for await event in engine.events { ... }
/// ```
///
/// One connection per channel; several channels at once (`joinChannelEx`), possibly on different
/// edges: the engine keeps one session per edge, opened on the first join there and closed when
/// its last connection leaves. Sockets, timers, encoders and sinks live on one ``EngineLoop``
/// thread; the async methods hop onto it and never block the caller's thread.
///
/// When an edge fails (its connection breaks, it goes silent, or it drains), every connection on
/// it rejoins on the edge the placement gives next, with the same token, uid, role, options,
/// subscriptions and sinks: ``EngineEvent/connectionStateChanged(_:state:reason:)`` reports
/// reconnecting (edge lost), then connected (rejoin succeeded) with
/// ``EngineEvent/rejoinedChannel(_:elapsed:)``. Calls on a connection while it rejoins fail with
/// `UNAVAILABLE`.
public final class ShowroomEngine: Sendable {
    /// The SDK version sent to edges.
    public static let sdkVersion = "showroom-kit/0.1"

    /// What happens, in order. Buffers the newest 10 000 events if nobody reads. For another
    /// reader (a call client beside the app, say), take a stream of its own with
    /// ``events(bufferingNewest:)``: two loops over this one would split its events.
    public let events: AsyncStream<EngineEvent>
    /// The configuration it runs with.
    public let configuration: EngineConfiguration
    /// The loop its sockets live on.
    public let loop: EngineLoop
    /// How channels are placed on edges.
    package let placement: any ChannelPlacement

    private let shell: LoopBound<EngineShell>
    private let ownsLoop: Bool
    private let eventHub: EventHub<EngineEvent>
    private let viewState = ViewState()

    private let preloads = Preloads()

    /// The edges of preloaded channels (``preloadChannel(token:channel:uid:)``), each used for
    /// ``lifetime`` without asking the cluster again; at most ``limit`` (the oldest go first).
    private final class Preloads: Sendable {
        private let edges = Mutex<[String: (edge: EdgeAddress, until: ContinuousClock.Instant)]>([:])
        /// VideoLoaderAPI preloads up to 20 channels.
        static let limit = 20
        static let lifetime = Duration.seconds(30)

        func remember(_ channel: String, on edge: EdgeAddress) {
            let now = ContinuousClock.now
            edges.withLock { edges in
                edges = edges.filter { $0.value.until > now }
                if edges[channel] == nil, edges.count >= Self.limit,
                   let oldest = edges.min(by: { $0.value.until < $1.value.until })?.key {
                    edges[oldest] = nil
                }
                edges[channel] = (edge, now + Self.lifetime)
            }
        }

        func edge(of channel: String) -> EdgeAddress? {
            edges.withLock { edges in edges[channel].flatMap { $0.until > .now ? $0.edge : nil } }
        }

        func forget(_ channel: String) { _ = edges.withLock { $0.removeValue(forKey: channel) } }
    }

    /// The view, shared with the shell's event path.
    private final class ViewState: Sendable {
        let view = Mutex(EngineView())
    }

    /// Creates an engine on a loop of its own.
    ///
    /// - Parameter configuration: Where the edges are, timeouts, media encoding.
    /// - Throws: `INTERNAL` if the loop cannot start.
    public convenience init(configuration: EngineConfiguration) async throws(ShowroomError) {
        try await self.init(configuration: configuration, loop: nil, placement: nil)
    }

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - configuration: Where the edges are, timeouts, media encoding.
    ///   - loop: A loop to share with other engines (a benchmark's hundreds of engines on a couple
    ///     of loops); a new one owned by this engine if `nil`.
    ///   - placement: Overrides the placement ``EngineConfiguration/entry`` implies.
    /// - Throws: `INTERNAL` if the loop cannot start.
    package init(configuration: EngineConfiguration, loop: EngineLoop? = nil, placement: (any ChannelPlacement)? = nil) async throws(ShowroomError) {
        let engineLoop: EngineLoop
        if let loop { engineLoop = loop } else { engineLoop = try EngineLoop(name: "showroom-engine") }
        ownsLoop = loop == nil
        self.loop = engineLoop
        self.configuration = configuration
        let chosen: any ChannelPlacement
        switch configuration.entry {
        case .seeds(let seeds):
            // Coordinators when the cluster has any, rendezvous over the edges when not.
            chosen = placement ?? CoordinatorPlacement(seeds: seeds, loop: engineLoop, timeout: configuration.requestTimeout)
        case .edge(let endpoint):
            chosen = placement ?? FixedEdgePlacement(endpoint: endpoint)
        }
        self.placement = chosen
        let hub = EventHub<EngineEvent>()
        eventHub = hub
        events = hub.stream(bufferingNewest: 10_000)
        let view = viewState
        let eventLoop = engineLoop.eventLoop
        do {
            shell = try await eventLoop.submit {
                LoopBound(EngineShell(host: LoopEngineHost(loop: eventLoop, context: engineLoop.context, placement: chosen),
                                      configuration: configuration) { event in
                    // The view first: a reader woken by the event reads a view that has it.
                    view.view.withLock { $0.apply(event) }
                    hub.yield(event)
                },
                          loop: eventLoop)
            }
        } catch {
            throw .unavailable("the engine loop has stopped")
        }
    }

    /// A stream of its own of everything that happens from now on, in order, for a reader beside
    /// the app's loop over ``events``; ends at ``shutdown()``, or when the reader stops.
    public func events(bufferingNewest limit: Int = 10_000) -> AsyncStream<EngineEvent> {
        eventHub.stream(bufferingNewest: limit)
    }

    /// The connections now, with their remote users and tracks, readable at any moment from any
    /// thread (kept from the engine's events, in their order).
    public var view: EngineView { viewState.view.withLock { $0 } }

    /// A stream of its own of what happens to one connection from now on (its channel's users,
    /// tracks, frames and states), in order: a view per connection (a call's, a PK peer's room)
    /// reads only its own. Matches the channel (and the uid, unless the connection's is 0).
    public func events(for connection: ChannelConnection, bufferingNewest limit: Int = 10_000) -> AsyncStream<EngineEvent> {
        eventHub.stream(bufferingNewest: limit) { event in
            guard let about = event.connection else { return false }
            return about.channel == connection.channel && (connection.uid == 0 || about.uid == connection.uid)
        }
    }

    // MARK: - Channels

    /// Joins a channel and makes it the primary connection, used by the calls that name no
    /// connection (`joinChannelByToken`).
    ///
    /// - Parameters:
    ///   - token: An AccessToken2 ("007…") with the join privilege for the channel and uid.
    ///   - channel: The channel name.
    ///   - uid: The local uid; 0 lets the edge assign one if the token allows any uid.
    ///   - options: Role and media options; `nil` fields take the role's defaults.
    /// - Returns: The connection, with the uid the edge confirmed.
    /// - Throws: The edge's refusal (token codes E2001–E2007, E3005 too many channels, E3006
    ///   channel full, E3011 already joined …), `INVALID_ARGUMENT` for a channel name outside
    ///   1-64 bytes of the allowed characters, `DEADLINE_EXCEEDED`, `UNAVAILABLE` (no edge).
    @discardableResult
    public func joinChannel(
        token: String, channel: String, uid: UInt32, options: ChannelMediaOptions = ChannelMediaOptions()
    ) async throws(ShowroomError) -> ChannelConnection {
        try await join(token: token, connection: ChannelConnection(channel: channel, uid: uid), options: options, primary: true)
    }

    /// Joins one more channel (`joinChannelEx`): the same as ``joinChannel(token:channel:uid:options:)``
    /// without making it the primary connection.
    ///
    /// - Parameters:
    ///   - token: An AccessToken2 with the join privilege for the channel and uid.
    ///   - connection: The channel and the local uid.
    ///   - options: Role and media options.
    /// - Returns: The connection, with the uid the edge confirmed.
    @discardableResult
    public func joinChannelEx(
        token: String, connection: ChannelConnection, options: ChannelMediaOptions = ChannelMediaOptions()
    ) async throws(ShowroomError) -> ChannelConnection {
        try await join(token: token, connection: connection, options: options, primary: false)
    }

    /// Joins; with `preferringWarmEdges`, a channel not placed yet is placed on an edge this
    /// engine already has a session with (a call's private channel, where its parties are).
    func join(token: String, connection: ChannelConnection, options: ChannelMediaOptions, primary: Bool,
              preferringWarmEdges: Bool = false) async throws(ShowroomError) -> ChannelConnection {
        // The edge's rule, checked here so a bad name fails at once with the same E1007.
        try Names.validateChannel(connection.channel)
        let started = ContinuousClock.now
        let shell = self.shell
        // A preloaded channel's edge is known already (a stale one answers CHANNEL_ELSEWHERE and
        // the join follows the redirect; an unreachable one is forgotten and the cluster asked).
        if let preloaded = preloads.edge(of: connection.channel) {
            do throws(ShowroomError) {
                return try await loop.perform { complete in
                    shell.value.join(token: token, connection: connection, options: options, edge: preloaded, preloaded: true,
                                     primary: primary, started: started, complete)
                }
            } catch where [.unavailable, .deadlineExceeded].contains(error.code) {
                preloads.forget(connection.channel)
            }
        }
        return try await loop.perform { complete in
            shell.value.join(token: token, connection: connection, options: options, primary: primary,
                             preferringWarmEdges: preferringWarmEdges, started: started, complete)
        }
    }

    /// Gets a channel ready to join (`preloadChannel`): its edge is asked for now and remembered
    /// for a while, a session to that edge is opened (or kept) warm, and the edge checks the
    /// token ahead (`PRELOAD_CHANNEL`, kept 30 s), so a later join with the same token costs
    /// neither the placement, nor the handshake, nor the token check. Nothing is joined,
    /// subscribed or counted.
    public func preloadChannel(token: String, channel: String, uid: UInt32) async throws(ShowroomError) {
        try Names.validateChannel(channel)
        let edge = try await placement.edge(for: channel, avoiding: nil, joiningAs: PlacementCredentials(uid: uid, token: token, audience: true))
        preloads.remember(channel, on: edge)
        do throws(ShowroomError) {
            try await onShell { shell, complete in shell.warmSession(to: edge, preloading: channel, uid: uid, token: token, complete) }
        } catch {
            preloads.forget(channel)
            throw error
        }
    }

    /// Leaves the primary channel (`leaveChannel`).
    public func leaveChannel() async throws(ShowroomError) {
        try await leaveChannelEx(nil)
    }

    /// Leaves a channel (`leaveChannelEx`); the others see this user quit. The session with the
    /// edge closes when its last connection leaves.
    ///
    /// - Parameter connection: The connection; the primary one if `nil`.
    public func leaveChannelEx(_ connection: ChannelConnection?) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.leave(connection, complete) }
    }

    /// Changes a connection's options live (`updateChannelEx`); `nil` fields stay as they are,
    /// a role is a role switch (to broadcaster needs a publish privilege).
    ///
    /// - Parameters:
    ///   - options: The fields to change.
    ///   - connection: The connection; the primary one if `nil`.
    public func updateChannelEx(options: ChannelMediaOptions, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.update(options, connection, complete) }
    }

    /// Switches role (`setClientRole`). Becoming audience stops publishing and makes this user
    /// invisible (the others see it offline, became audience); the publish options are kept for
    /// when it becomes a broadcaster again.
    ///
    /// - Parameters:
    ///   - role: The new role.
    ///   - connection: The connection; the primary one if `nil`.
    public func setClientRole(_ role: ClientRole, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.setRole(role, connection, complete) }
    }

    /// Replaces a connection's token in place (`renewToken`), typically after
    /// ``EngineEvent/tokenWillExpire(_:expiresIn:)``.
    ///
    /// - Parameters:
    ///   - token: The new token, for the same channel and uid.
    ///   - connection: The connection; the primary one if `nil`.
    public func renewToken(_ token: String, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.renewToken(token, connection, complete) }
    }

    // MARK: - Remote media

    /// Subscribes to a remote user's track, overriding auto-subscribe (also before it is
    /// published).
    public func subscribe(uid: UInt32, track: TrackKind, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await trackRequest(connection) { .subscribe(TrackID(channel: $0, uid: uid, kind: track.edgeKind)) }
    }

    /// Stops receiving a remote user's track.
    public func unsubscribe(uid: UInt32, track: TrackKind, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await trackRequest(connection) { .unsubscribe(TrackID(channel: $0, uid: uid, kind: track.edgeKind)) }
    }

    /// Stops (or resumes) a remote user's audio without unsubscribing (`muteRemoteAudioStream`).
    public func muteRemoteAudioStream(uid: UInt32, muted: Bool, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await trackRequest(connection) { .muteRemote(TrackID(channel: $0, uid: uid, kind: .audio), muted: muted) }
    }

    /// Stops (or resumes) a remote user's video without unsubscribing (`muteRemoteVideoStream`);
    /// resuming starts at the edge's cached keyframe at once.
    public func muteRemoteVideoStream(uid: UInt32, muted: Bool, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await trackRequest(connection) { .muteRemote(TrackID(channel: $0, uid: uid, kind: .video), muted: muted) }
    }

    /// Where a remote user's video goes (`setupRemoteVideo`): each frame is handed to `sink` on
    /// the loop thread; the first one it decodes is reported as
    /// ``EngineEvent/firstRemoteVideoFrameDecoded(_:uid:width:height:elapsedSinceJoin:)``.
    /// Without a sink, frames are only counted (``statistics()``). May be called before the join
    /// (naming the connection), so the burst of cached frames a join brings is not missed; the
    /// sinks of a channel are dropped when the engine leaves it.
    ///
    /// - Parameters:
    ///   - uid: The remote user.
    ///   - connection: The connection; the primary one if `nil`.
    ///   - sink: The sink; `nil` removes it.
    public func setupRemoteVideo(uid: UInt32, connection: ChannelConnection? = nil, sink: (any RemoteVideoSink)?) async throws(ShowroomError) {
        try await onShell { shell, complete in
            complete(Result { () throws(ShowroomError) in try shell.setVideoSink(sink, uid: uid, connection) })
        }
    }

    /// Where a remote user's audio goes; without a sink, frames are only counted.
    public func setupRemoteAudio(uid: UInt32, connection: ChannelConnection? = nil, sink: (any RemoteAudioSink)?) async throws(ShowroomError) {
        try await onShell { shell, complete in
            complete(Result { () throws(ShowroomError) in try shell.setAudioSink(sink, uid: uid, connection) })
        }
    }

    /// Volume reports for every channel of this engine (`enableAudioVolumeIndication`), as
    /// ``EngineEvent/volumeIndication(_:speakers:)`` events.
    ///
    /// - Parameters:
    ///   - interval: Report period, at least 100 ms; zero disables.
    ///   - smoothing: 0 (none) – 10 (heaviest).
    ///   - reportVAD: Report voice activity per speaker.
    public func enableAudioVolumeIndication(interval: Duration, smoothing: Int = 3, reportVAD: Bool = false) async throws(ShowroomError) {
        let config = interval > .zero ? VolumeIndicationConfig(interval: interval, smoothing: smoothing, reportVAD: reportVAD) : nil
        try await onShell { shell, complete in shell.enableVolumeIndication(config, complete) }
    }

    // MARK: - Data

    /// Sends a stream message to every other user of the channel, in order
    /// (`sendStreamMessage`). Needs the broadcaster role, publishData and the publish-data
    /// privilege; at most 1 KiB, 60 a second.
    ///
    /// - Returns: The sequence number the receivers see.
    @discardableResult
    public func sendStreamMessage(streamID: UInt32, data: [UInt8], connection: ChannelConnection? = nil) async throws(ShowroomError) -> UInt32 {
        try await onShell { shell, complete in
            let channel = (try? shell.state.record(for: connection).connection.channel) ?? ""
            shell.request(.sendStreamMessage(channel: channel, streamID: streamID, data: data), for: connection, complete) { body in
                if case .streamMessageSent(let sequence) = body { return sequence }
                return 0
            }
        }
    }

    // MARK: - Local media

    /// Sets the camera (`nil`: none). Video is captured and encoded (VP8) on the loop while any
    /// connection publishes video; one encoding goes to every such connection.
    public func setLocalVideoSource(_ source: (any VideoSource)?) async {
        try? await onShell { shell, complete in
            shell.setVideoSource(source)
            complete(.success(()))
        }
    }

    /// Gets the camera ready (the seeds' `startPreview`): its encoder is made now, so the first
    /// frame of a later join or call goes out without waiting for it. Frames are captured only
    /// while a connection publishes video. Without a camera, nothing happens.
    public func startPreview() async {
        try? await onShell { shell, complete in
            shell.startPreview()
            complete(.success(()))
        }
    }

    /// Publishes video the app encodes itself instead of the camera (the seeds'
    /// `setExternalVideoSource` with encoded frames): while enabled, frames pushed with
    /// ``pushExternalEncodedVideoFrame(_:)`` go out untouched to every connection that publishes video,
    /// and ``EngineEvent/keyframeRequested`` says when a subscriber needs a keyframe. Setting a
    /// camera with ``setLocalVideoSource(_:)`` ends it.
    public func setExternalEncodedVideoSource(_ enabled: Bool) async {
        try? await onShell { shell, complete in
            shell.setExternalEncodedVideo(enabled)
            complete(.success(()))
        }
    }

    /// Sends one app-encoded VP8 frame (the seeds' `pushExternalEncodedVideoFrame`) on every
    /// connection that publishes video, in the order pushed.
    ///
    /// - Returns: The connections it was sent on (0 while none publishes video; a connection whose
    ///   queue to its edge is full skips the frame, as live media does).
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` before ``setExternalEncodedVideoSource(_:)``,
    ///   for an empty frame or an impossible size; `TOO_LARGE` for a frame over the edge's limit.
    @discardableResult
    public func pushExternalEncodedVideoFrame(_ frame: ExternalEncodedVideoFrame) async throws(ShowroomError) -> Int {
        try await onShell { shell, complete in
            complete(Result { () throws(ShowroomError) in try shell.pushEncodedVideo(frame) })
        }
    }

    /// Sets the microphone (`nil`: none). Audio is encoded (Opus, 20 ms frames, with its level)
    /// on the loop while any connection publishes audio.
    public func setLocalAudioSource(_ source: (any AudioSource)?) async {
        try? await onShell { shell, complete in
            shell.setAudioSource(source)
            complete(.success(()))
        }
    }

    /// Stops (or resumes) sending the microphone on a connection (`muteLocalAudioStream`); the
    /// others see the track unpublished.
    public func muteLocalAudioStream(_ muted: Bool, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.muteLocal(.audio, muted: muted, connection, complete) }
    }

    /// Stops (or resumes) sending the camera on a connection (`muteLocalVideoStream`).
    public func muteLocalVideoStream(_ muted: Bool, connection: ChannelConnection? = nil) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.muteLocal(.video, muted: muted, connection, complete) }
    }

    // MARK: - State

    /// Media counters since the engine started.
    public func statistics() async -> EngineStatistics {
        (try? await onShell { shell, complete in complete(.success(shell.statistics)) }) ?? EngineStatistics()
    }

    /// The node id of the edge a joined connection is on (nil when it is not joined): a busy
    /// channel's audience may be on a relay edge rather than the channel's origin.
    public func edgeID(of connection: ChannelConnection) async -> String? {
        try? await onShell { shell, complete in
            complete(.success(shell.state.connections[connection.channel].flatMap { $0.isJoined && $0.connection == connection ? $0.edge.id : nil }))
        }
    }

    /// The connections held, sorted by channel.
    public func connections() async -> [ChannelConnection] {
        (try? await onShell { shell, complete in
            complete(.success(shell.state.connections.values.filter(\.isJoined).map(\.connection).sorted { $0.channel < $1.channel }))
        }) ?? []
    }

    /// Leaves every channel, closes every edge session, ends ``events`` and, if the engine owns
    /// its loop, stops it. Safe to call twice.
    public func shutdown() async {
        _ = try? await onShell { (shell, complete: @escaping (Result<Void, ShowroomError>) -> Void) in
            shell.shutdown { complete(.success(())) }
        }
        eventHub.finish()
        if ownsLoop { await loop.shutdown() }
    }

    // MARK: - Forwarding into other channels

    /// Forwards this connection's published tracks into up to four other channels
    /// (`startForwardStreamToRooms`, `startOrUpdateChannelMediaRelay`): the edge joins each
    /// destination as this connection's uid and forwards its audio and video there unchanged; the
    /// destinations' viewers see an ordinary remote user. Each destination's state changes come as
    /// ``EngineEvent/forwardStateChanged(_:destination:)``; forwarding ends when this connection
    /// leaves its channel or becomes audience.
    ///
    /// - Parameters:
    ///   - destinations: 1-4 channels, each with a token for that channel and this connection's
    ///     uid granting join and publish.
    ///   - connection: The broadcasting connection; the primary one if `nil`.
    /// - Returns: Every destination as the edge started it (usually connecting).
    /// - Throws: `FORWARD_ALREADY_STARTED` (update instead), `FORWARD_TOO_MANY_DESTINATIONS`,
    ///   `FORWARD_INVALID_DESTINATION`, `FORWARD_UPDATE_TOO_FREQUENT`, `ROLE_FORBIDS_PUBLISH` for an
    ///   audience connection, `INVALID_ARGUMENT` for a bad channel name or token size.
    @discardableResult
    public func startForwardStream(to destinations: [ForwardDestination], connection: ChannelConnection? = nil) async throws(ShowroomError) -> [ForwardDestinationStatus] {
        let operation = EdgeProtocol.ForwardOperation.start(destinations.map(\.edgeDestination))
        return try await onShell { shell, complete in shell.forward(operation, connection, complete) }
    }

    /// Replaces the destination set of this connection's forward (0-4 channels): destinations no
    /// longer listed are left (idle, removed), new ones joined, one with a new token joined again.
    /// At most 10 starts and updates a second (`FORWARD_UPDATE_TOO_FREQUENT` beyond).
    ///
    /// - Returns: Every destination after the update.
    @discardableResult
    public func updateForwardStream(to destinations: [ForwardDestination], connection: ChannelConnection? = nil) async throws(ShowroomError) -> [ForwardDestinationStatus] {
        let operation = EdgeProtocol.ForwardOperation.update(destinations.map(\.edgeDestination))
        return try await onShell { shell, complete in shell.forward(operation, connection, complete) }
    }

    /// Stops sending to every destination, staying joined in them (`pauseForwardStreamToAllRooms`).
    public func pauseForwardStream(connection: ChannelConnection? = nil) async throws(ShowroomError) {
        let _: [ForwardDestinationStatus] = try await onShell { shell, complete in shell.forward(.pause, connection, complete) }
    }

    /// Sends to every destination again after ``pauseForwardStream(connection:)``.
    public func resumeForwardStream(connection: ChannelConnection? = nil) async throws(ShowroomError) {
        let _: [ForwardDestinationStatus] = try await onShell { shell, complete in shell.forward(.resume, connection, complete) }
    }

    /// Stops forwarding: every destination goes idle and its viewers see the user go offline
    /// (forward stopped).
    public func stopForwardStream(connection: ChannelConnection? = nil) async throws(ShowroomError) {
        let _: [ForwardDestinationStatus] = try await onShell { shell, complete in shell.forward(.stop, connection, complete) }
    }

    // MARK: - Plumbing

    private func onShell<T: Sendable>(_ body: @escaping @Sendable (EngineShell, @escaping (Result<T, ShowroomError>) -> Void) -> Void) async throws(ShowroomError) -> T {
        let shell = self.shell
        return try await loop.perform { complete in body(shell.value, complete) }
    }

    private func trackRequest(_ connection: ChannelConnection?, _ make: @escaping @Sendable (String) -> EdgeRequest) async throws(ShowroomError) {
        try await onShell { shell, complete in shell.trackRequest(connection, make, complete) }
    }
}
