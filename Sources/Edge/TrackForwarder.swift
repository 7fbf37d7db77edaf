/// The forwarding decisions for one published track: who gets each frame, the GOP cache, and when
/// to ask the publisher for a keyframe. The hot path of the edge.
///
/// For every frame, ``forward(_:isKeyframe:bytes:transitions:send:)`` walks the subscribers (kept
/// in a `ContiguousArray` that is reused, in subscription order) and calls the shell's `send`
/// callback for each one that should get it — no array is built per frame, and the callback sends
/// a reference to the frame (`zmq_msg_copy`). Per subscriber:
/// - **muted** (muted locally, still subscribed): nothing is sent.
/// - **flowing**: the frame is sent. A video subscriber whose queue is full (`wouldBlock`) goes to
///   *awaiting keyframe* — sending it the following deltas would only give it undecodable frames —
///   and the publisher is asked for a keyframe. An audio subscriber just misses that frame.
/// - **awaiting keyframe** (video): deltas are skipped; the next keyframe that gets through makes it
///   flowing again.
///
/// A slow subscriber therefore never slows the others, and recovers cleanly at a keyframe.
///
/// A new video subscriber starts *awaiting keyframe*; if the GOP cache holds a decodable GOP, the
/// shell sends it the cache first (``sendCache(to:transitions:send:)``), which makes it flowing at
/// once; otherwise the publisher is asked for a keyframe.
///
/// Keyframe requests are wanted while some subscriber waits for one, and granted at most once per
/// interval by ``takeKeyframeRequest(now:interval:)`` — repeated while still wanted, in case the
/// publisher missed one.
public struct TrackForwarder<Frame> {
    /// What a new or unmuted subscriber needs next.
    public enum Start: Sendable, Hashable {
        /// Nothing: it gets the next frame (audio).
        case flowing
        /// Send it the GOP cache now (``sendCache(to:transitions:send:)``).
        case sendCache
        /// It waits for the publisher's next keyframe; a keyframe request is wanted.
        case awaitKeyframe
        /// It is muted locally: nothing until unmuted.
        case muted
    }

    struct Subscriber {
        var session: SessionID
        var muted: Bool
        var state: SubscriberState
    }

    /// Audio or video.
    public let kind: TrackKind
    /// The publishing session (frames from any other session are not this track's); a real
    /// publisher taking over a relay's stand-in takes its tracks over too.
    public internal(set) var publisher: SessionID
    /// The GOP cache (video only).
    public private(set) var cache: GOPCache<Frame>?
    /// Some subscriber waits for a keyframe that has not been asked for yet (or not answered).
    public private(set) var keyframeWanted = false
    private(set) var lastKeyframeRequest: Duration?
    private(set) var subscribers: ContiguousArray<Subscriber> = []

    /// Creates a forwarder with no subscribers.
    ///
    /// - Parameters:
    ///   - kind: Audio or video; video tracks get a GOP cache.
    ///   - publisher: The publishing session.
    ///   - gopMaxFrames: Bound of the GOP cache in frames.
    ///   - gopMaxBytes: Bound of the GOP cache in payload bytes.
    public init(kind: TrackKind, publisher: SessionID, gopMaxFrames: Int, gopMaxBytes: Int) {
        self.kind = kind
        self.publisher = publisher
        if kind == .video {
            cache = GOPCache(maxFrames: gopMaxFrames, maxBytes: gopMaxBytes)
        }
    }

    // MARK: - Reading

    /// Number of subscribers, muted ones included.
    public var subscriberCount: Int { subscribers.count }

    /// True if `session` subscribes to the track.
    ///
    /// - Parameter session: A session.
    public func contains(_ session: SessionID) -> Bool {
        index(of: session) != nil
    }

    /// The state of a subscriber.
    ///
    /// - Parameter session: A session.
    /// - Returns: Its state and whether it is muted, or `nil` if it does not subscribe.
    public func subscriber(_ session: SessionID) -> (state: SubscriberState, muted: Bool)? {
        guard let i = index(of: session) else { return nil }
        return (subscribers[i].state, subscribers[i].muted)
    }

    /// Calls `body` for each subscriber, in subscription order, without building an array.
    ///
    /// - Parameter body: Receives the session, its state and whether it is muted.
    public func forEachSubscriber<E: Error>(_ body: (SessionID, SubscriberState, Bool) throws(E) -> Void) throws(E) {
        for subscriber in subscribers {
            try body(subscriber.session, subscriber.state, subscriber.muted)
        }
    }

    private func index(of session: SessionID) -> Int? {
        subscribers.firstIndex { $0.session == session }
    }

    // MARK: - Subscribers

    /// Adds a subscriber.
    ///
    /// - Parameters:
    ///   - session: The subscribing session.
    ///   - muted: It has muted the track locally.
    ///   - reason: Why it subscribes, reported when it starts decoding.
    ///   - first: Served before the others (another edge's link: a relay fans the frame out again,
    ///     so every place it waits behind here adds to its viewers' latency).
    /// - Returns: What it needs next, or `nil` if it already subscribed.
    public mutating func addSubscriber(_ session: SessionID, muted: Bool, reason: RemoteVideoStateReason, first: Bool = false) -> Start? {
        guard index(of: session) == nil else { return nil }
        let state: SubscriberState = kind == .video ? .awaitingKeyframe(reason) : .flowing
        let position = first ? 0 : subscribers.count
        subscribers.insert(Subscriber(session: session, muted: muted, state: state), at: position)
        return muted ? .muted : start(position)
    }

    /// Removes a subscriber.
    ///
    /// - Parameter session: The session.
    /// - Returns: True if it subscribed.
    @discardableResult
    public mutating func removeSubscriber(_ session: SessionID) -> Bool {
        guard let i = index(of: session) else { return false }
        subscribers.remove(at: i)
        return true
    }

    /// Mutes or unmutes a subscriber locally. An unmuted video subscriber restarts at a keyframe
    /// (it missed frames while muted), from the GOP cache when possible.
    ///
    /// - Parameters:
    ///   - muted: Mute (true) or unmute.
    ///   - session: The subscriber.
    ///   - reason: Reported when an unmuted video subscriber starts decoding.
    /// - Returns: What it needs next, or `nil` if it does not subscribe or nothing changed.
    public mutating func setMuted(_ muted: Bool, for session: SessionID, reason: RemoteVideoStateReason) -> Start? {
        guard let i = index(of: session), subscribers[i].muted != muted else { return nil }
        subscribers[i].muted = muted
        if muted { return .muted }
        if kind == .video { subscribers[i].state = .awaitingKeyframe(reason) }
        return start(i)
    }

    private mutating func start(_ i: Int) -> Start {
        guard case .awaitingKeyframe = subscribers[i].state else { return .flowing }
        if let cache, !cache.isEmpty { return .sendCache }
        keyframeWanted = true
        return .awaitKeyframe
    }

    // MARK: - Frames

    /// Delivers one frame of the track to its subscribers (and records it in the GOP cache).
    ///
    /// - Parameters:
    ///   - frame: The frame; kept in the GOP cache if it is video, so it must stay valid.
    ///   - isKeyframe: The frame decodes on its own (video).
    ///   - bytes: Payload size, for the cache's byte bound.
    ///   - transitions: Receives the subscribers' state changes (decoding, frozen, unreachable).
    ///   - send: Sends the frame to one subscriber and says how it went.
    /// - Returns: What became of the frame.
    public mutating func forward(
        _ frame: Frame,
        isKeyframe: Bool,
        bytes: Int,
        transitions: inout ContiguousArray<SubscriberTransition>,
        send: (SessionID, Frame) -> DeliveryOutcome
    ) -> ForwardCounts {
        let isVideo = kind == .video
        if isVideo { cache!.add(frame, isKeyframe: isKeyframe, bytes: bytes) }
        var counts = ForwardCounts()
        // Recomputed below on a keyframe: only subscribers it did not reach still want one.
        if isKeyframe { keyframeWanted = false }
        for i in subscribers.indices {
            let subscriber = subscribers[i]
            if subscriber.muted { continue }
            switch subscriber.state {
            case .flowing:
                switch send(subscriber.session, frame) {
                case .sent:
                    counts.delivered += 1
                case .wouldBlock:
                    counts.dropped += 1
                    if isVideo {
                        subscribers[i].state = .awaitingKeyframe(.networkRecovery)
                        keyframeWanted = true
                        transitions.append(SubscriberTransition(session: subscriber.session, change: .videoState(.frozen, .networkCongestion)))
                    }
                case .unreachable:
                    transitions.append(SubscriberTransition(session: subscriber.session, change: .unreachable))
                }
            case .awaitingKeyframe(let reason):
                guard isKeyframe else {
                    counts.skipped += 1
                    continue
                }
                switch send(subscriber.session, frame) {
                case .sent:
                    counts.delivered += 1
                    subscribers[i].state = .flowing
                    transitions.append(SubscriberTransition(session: subscriber.session, change: .videoState(.decoding, reason)))
                case .wouldBlock:
                    counts.dropped += 1
                    keyframeWanted = true
                case .unreachable:
                    transitions.append(SubscriberTransition(session: subscriber.session, change: .unreachable))
                }
            }
        }
        return counts
    }

    /// Sends the GOP cache to a subscriber that waits for a keyframe (a new or unmuted one), so its
    /// first decodable frame arrives at once. Does nothing if it no longer waits (a live keyframe
    /// got there first) or the cache is empty. If its queue fills up midway it keeps waiting for
    /// the next keyframe and one is requested.
    ///
    /// - Parameters:
    ///   - session: The subscriber.
    ///   - transitions: Receives its change to decoding, or unreachable.
    ///   - send: Sends one frame to the subscriber and says how it went.
    /// - Returns: What became of the cached frames.
    public mutating func sendCache(
        to session: SessionID,
        transitions: inout ContiguousArray<SubscriberTransition>,
        send: (SessionID, Frame) -> DeliveryOutcome
    ) -> ForwardCounts {
        var counts = ForwardCounts()
        guard let i = index(of: session), !subscribers[i].muted,
            case .awaitingKeyframe(let reason) = subscribers[i].state,
            let cache, !cache.isEmpty
        else { return counts }
        for frame in cache.frames {
            switch send(session, frame) {
            case .sent:
                counts.delivered += 1
            case .wouldBlock:
                counts.dropped += 1
                keyframeWanted = true
                return counts
            case .unreachable:
                transitions.append(SubscriberTransition(session: session, change: .unreachable))
                return counts
            }
        }
        subscribers[i].state = .flowing
        transitions.append(SubscriberTransition(session: session, change: .videoState(.decoding, reason)))
        return counts
    }

    /// Decides whether to ask the publisher for a keyframe now: true when some unmuted subscriber
    /// waits for one and the last request is at least `interval` old.
    ///
    /// - Parameters:
    ///   - now: The current clock value.
    ///   - interval: Least time between two requests (``EdgeSettings/keyframeRequestInterval``).
    /// - Returns: True if a request is to be sent (and is recorded as sent).
    public mutating func takeKeyframeRequest(now: Duration, interval: Duration) -> Bool {
        guard keyframeWanted else { return false }
        let waiting = subscribers.contains {
            if !$0.muted, case .awaitingKeyframe = $0.state { true } else { false }
        }
        guard waiting else {
            keyframeWanted = false
            return false
        }
        if let last = lastKeyframeRequest, now - last < interval { return false }
        lastKeyframeRequest = now
        return true
    }

    /// Decides whether to pass on a keyframe request from `subscriber` (a relay link, whose own
    /// viewers wait for the keyframe): true when it subscribes (unmuted) and the last request is
    /// at least `interval` old.
    public mutating func takeKeyframeRequest(from subscriber: SessionID, now: Duration, interval: Duration) -> Bool {
        guard let i = index(of: subscriber), !subscribers[i].muted else { return false }
        if let last = lastKeyframeRequest, now - last < interval { return false }
        lastKeyframeRequest = now
        return true
    }
}

extension TrackForwarder: Sendable where Frame: Sendable {}
extension TrackForwarder.Subscriber: Sendable {}
