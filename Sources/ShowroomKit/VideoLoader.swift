import Synchronization

/// What a ``VideoLoader`` reports.
public enum VideoLoaderEvent: Sendable, Equatable {
    /// A room's host was decoded after its channel's state rose to video: `actual` from the state
    /// change to the first decoded frame, `perceived` from the room's card becoming visible
    /// (``VideoLoader/cardVisible(_:)``, a touch or a swipe; the state change when nothing said
    /// so) — VideoLoaderAPI's `onFirstFrameRecv`, on every such change, not only the first.
    case firstFrame(channel: String, uid: UInt32, actual: Duration, perceived: Duration)
    /// An engine step for the room failed (a refused token, a channel that closed …); the room's
    /// state stays as asked, and a later change tries again.
    case error(channel: String, ShowroomError)
}

/// Instant open and instant switch (Agora's VideoLoaderAPI under Swift names): rooms a viewer is
/// about to see are joined ahead on their own connections (``AnchorState/prejoined``), so showing
/// one is a subscription on a channel already joined, not a join.
///
/// States are asked for per tag and counted: a channel is in the highest state
/// any tag asks for and is left when no tag holds it. ``swipe(to:in:settled:)`` drives a swipe
/// feed: the room on screen with video (and audio once the scroll ended), one room above and
/// below prejoined, every other room left. Calls return at once; the engine steps run in order
/// behind them (``settle()`` waits for them).
///
/// ```swift
/// let loader = VideoLoader(engine: engine, localUID: me)
/// loader.swipe(to: index, in: rooms)                            // on scroll end
/// loader.switchAnchorState(.joinedWithVideo, anchor: card, tag: "list")  // touch-down on a card
/// for await case .firstFrame(let channel, _, let actual, let perceived) in loader.events { ... }
/// ```
public final class VideoLoader: Sendable {
    /// First frames and errors, in order.
    public let events: AsyncStream<VideoLoaderEvent>
    /// The engine the rooms are joined on.
    public let engine: ShowroomEngine
    /// The viewer's uid.
    public let localUID: UInt32

    private struct State: ~Copyable {
        var book: AnchorBook
        var window: SwipeWindow
        /// When each channel's video was asked for, until its first frame.
        var videoAskedAt: [String: ContinuousClock.Instant] = [:]
        /// When each room's card became visible, until its first frame.
        var visibleAt: [String: ContinuousClock.Instant] = [:]
        /// The rooms a touch holds (tag ``VideoLoader/touchTag``).
        var touched: [String: AnchorInfo] = [:]
        /// The rooms preloaded lately (asked again only once their preload grew stale).
        var preloads = PreloadList()
        /// Engine steps queued and not yet done.
        var queued = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>
    private let steps: AsyncStream<[AnchorBook.Directive]>.Continuation
    private let sink: AsyncStream<VideoLoaderEvent>.Continuation
    private let sinks: @Sendable (AnchorInfo) -> any RemoteVideoSink
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// A loader for `engine`'s viewer `localUID`; `videoSink` makes the sink each room's host is
    /// rendered into (a decoder by default), `prejoinCount` the rooms prejoined on each side of a
    /// swipe feed's current one.
    public init(engine: ShowroomEngine, localUID: UInt32, prejoinCount: Int = 1,
                videoSink: @escaping @Sendable (AnchorInfo) -> any RemoteVideoSink = { _ in DecodingVideoSink() }) {
        self.engine = engine
        self.localUID = localUID
        self.sinks = videoSink
        state = Mutex(State(book: AnchorBook(localUID: localUID), window: SwipeWindow(prejoinCount: prejoinCount)))
        (events, sink) = AsyncStream<VideoLoaderEvent>.makeStream(bufferingPolicy: .bufferingNewest(1_000))
        let (stepStream, steps) = AsyncStream<[AnchorBook.Directive]>.makeStream()
        self.steps = steps
        let worker = Task { [weak self] in
            for await directives in stepStream {
                guard let self else { return }
                for directive in directives { await self.perform(directive) }
                self.stepDone()
            }
        }
        // Subscribed now, not when the task starts: a first frame may come right after this returns.
        let engineEvents = engine.events(bufferingNewest: 1_000)
        let watcher = Task { [weak self] in
            for await event in engineEvents {
                guard let self else { return }
                if case .firstRemoteVideoFrameDecoded(let connection, let uid, _, _, _) = event, connection.uid == localUID {
                    self.decoded(connection.channel, uid: uid)
                }
            }
        }
        tasks.withLock { $0 = [worker, watcher] }
    }

    deinit {
        steps.finish()
        sink.finish()
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    /// The channel's state (the highest any tag asks for).
    public func state(of channel: String) -> AnchorState { state.withLock { $0.book.state(of: channel) } }

    /// The channels joined now (prejoined or more).
    public var heldChannels: [String] { state.withLock { $0.book.heldChannels } }

    /// `tag` asks for `state` of `anchor`'s room (VideoLoaderAPI's `switchAnchorState`); idle ends
    /// the tag's hold. The viewer's own room is never joined as audience.
    public func switchAnchorState(_ state: AnchorState, anchor: AnchorInfo, tag: String) {
        apply { $0.book.set(state, for: anchor, tag: tag) }
    }

    /// A swipe feed is at `index` of `rooms`: that room shows (and is heard once `settled`), one
    /// room on each side is prejoined, the feed's other rooms are left (tag `swipe`); the rooms
    /// around (up to 20) are preloaded. The feed takes over from a touch that opened a room.
    public func swipe(to index: Int, in rooms: [AnchorInfo], settled: Bool = true) {
        if rooms.indices.contains(index) { cardVisible(rooms[index]) }
        apply { state in
            var directives = state.window.focus(on: index, of: rooms, settled: settled).flatMap { change in
                state.book.set(change.state, for: change.anchor, tag: Self.swipeTag)
            }
            for anchor in state.touched.values { directives += state.book.set(.idle, for: anchor, tag: Self.touchTag) }
            state.touched = [:]
            return directives
        }
        preloadChannels(PreloadList.around(index, of: rooms))
    }

    /// Gets rooms ready to open (VideoLoaderAPI's `preloadChannels`, at most 20): each channel's
    /// edge is asked for and a session to it opened ahead, so opening the room later costs
    /// neither. Nothing is joined. Rooms preloaded in the last 20 s are skipped.
    public func preloadChannels(_ anchors: [AnchorInfo]) {
        let now = ContinuousClock.now
        let fresh = state.withLock { state -> [AnchorInfo] in
            let book = state.book
            let fresh = state.preloads.choose(anchors, localUID: book.localUID, now: now) { book.state(of: $0) != .idle }
            if !fresh.isEmpty { state.queued += 1 }  // settle() waits for the preloads too
            return fresh
        }
        guard !fresh.isEmpty else { return }
        let (engine, uid, sink) = (self.engine, self.localUID, self.sink)
        Task { [weak self] in
            for anchor in fresh {
                do throws(ShowroomError) {
                    try await engine.preloadChannel(token: anchor.token, channel: anchor.channel, uid: uid)
                } catch {
                    sink.yield(.error(channel: anchor.channel, error))
                }
            }
            self?.stepDone()
        }
    }

    /// A room's card became visible (a list cell shown, a feed page scrolled in): its first frame's
    /// perceived time counts from now.
    public func cardVisible(_ anchor: AnchorInfo) {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.visibleAt[anchor.channel] == nil { state.visibleAt[anchor.channel] = now }
        }
    }

    /// A finger went down on a room's card: its video starts before the finger lifts (tag
    /// ``touchTag``).
    public func touchDown(_ anchor: AnchorInfo) {
        cardVisible(anchor)
        apply { state in
            state.touched[anchor.channel] = anchor
            return state.book.set(.joinedWithVideo, for: anchor, tag: Self.touchTag)
        }
    }

    /// The finger lifted: inside the card the app opens the room (its video runs on; the feed's
    /// ``swipe(to:in:settled:)`` takes over), outside it (slid away) the touch lets the room go.
    public func touchUp(_ anchor: AnchorInfo, inside: Bool) {
        guard !inside else { return }
        apply { state in
            state.touched[anchor.channel] = nil
            state.visibleAt[anchor.channel] = nil
            return state.book.set(.idle, for: anchor, tag: Self.touchTag)
        }
    }

    /// The tag of touches on room cards.
    public static let touchTag = "touch"

    /// The most rooms preloaded at once.
    public static let maxPreloads = PreloadList.maxPreloads

    /// Leaves every room of every tag (VideoLoaderAPI's `cleanCache`).
    public func cleanCache() {
        apply { state in
            state.window = SwipeWindow(prejoinCount: state.window.prejoinCount)
            return state.book.clean()
        }
    }

    /// Waits until every engine step asked for so far is done.
    public func settle() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                guard state.queued > 0 else { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if done { waiter.resume() }
        }
    }

    /// The tag of ``swipe(to:in:settled:)``.
    public static let swipeTag = "swipe"

    // MARK: - Shell

    private func apply(_ change: (inout State) -> [AnchorBook.Directive]) {
        let directives = state.withLock { state -> [AnchorBook.Directive] in
            let directives = change(&state)
            let now = ContinuousClock.now
            for case .video(let channel, _, let on) in directives {
                if on { state.videoAskedAt[channel] = now } else { state.videoAskedAt[channel] = nil }
            }
            for case .leave(let channel) in directives {
                state.videoAskedAt[channel] = nil
                state.visibleAt[channel] = nil
            }
            if !directives.isEmpty { state.queued += 1 }
            return directives
        }
        if !directives.isEmpty { steps.yield(directives) }
    }

    private func stepDone() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.queued -= 1
            guard state.queued == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func decoded(_ channel: String, uid: UInt32) {
        let (asked, visible) = state.withLock { ($0.videoAskedAt.removeValue(forKey: channel), $0.visibleAt.removeValue(forKey: channel)) }
        guard let asked else { return }
        let now = ContinuousClock.now
        sink.yield(.firstFrame(channel: channel, uid: uid, actual: now - asked, perceived: now - min(asked, visible ?? asked)))
    }

    private func perform(_ directive: AnchorBook.Directive) async {
        do throws(ShowroomError) {
            switch directive {
            case .join(let anchor):
                var options = ChannelMediaOptions.audience
                options.autoSubscribeAudio = false
                options.autoSubscribeVideo = false
                _ = try await engine.joinChannelEx(token: anchor.token, connection: connection(anchor.channel), options: options)
            case .video(let name, let uid, let on):
                if on {
                    let anchor = state.withLock { $0.book.channels[name]?.anchor } ?? AnchorInfo(channel: name, uid: uid, token: "")
                    try await engine.setupRemoteVideo(uid: uid, connection: connection(name), sink: sinks(anchor))
                    try await engine.subscribe(uid: uid, track: .video, connection: connection(name))
                } else {
                    try await engine.unsubscribe(uid: uid, track: .video, connection: connection(name))
                    try await engine.setupRemoteVideo(uid: uid, connection: connection(name), sink: nil)
                }
            case .audio(let name, let uid, let on):
                if on {
                    try await engine.subscribe(uid: uid, track: .audio, connection: connection(name))
                } else {
                    try await engine.unsubscribe(uid: uid, track: .audio, connection: connection(name))
                }
            case .leave(let name):
                try await engine.leaveChannelEx(connection(name))
            }
        } catch {
            let name: String = switch directive {
            case .join(let anchor): anchor.channel
            case .video(let name, _, _), .audio(let name, _, _), .leave(let name): name
            }
            sink.yield(.error(channel: name, error))
        }
    }

    private func connection(_ channel: String) -> ChannelConnection { ChannelConnection(channel: channel, uid: localUID) }
}
