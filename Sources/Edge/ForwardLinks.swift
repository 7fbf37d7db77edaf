import ShowroomWire

/// A forward's link to one destination edge: the forward and that edge's client endpoint.
public struct ForwardLinkKey: Hashable, Sendable {
    /// The forward.
    public var key: ForwardKey
    /// The destination edge's client endpoint.
    public var endpoint: String

    /// The link of `key` to the edge at `endpoint`.
    public init(key: ForwardKey, endpoint: String) {
        self.key = key
        self.endpoint = endpoint
    }
}

/// The forwards' links to destination edges, as a pure state machine: one per forward and
/// destination edge, with the destinations joined (or being joined) over it and those whose
/// video must restart at a keyframe (just joined, or a frame was dropped at a full queue). It
/// decides which link a join goes over, when a link closes (no destination left once the last
/// leave or refused join is answered) and which of a frame's destinations on an edge get it; the
/// shell holds each link's connection as an opaque `Handle` and carries that out.
public struct ForwardLinks<Handle> {
    /// One connection of a link: answers that arrive on a connection replaced since (its
    /// `generation` is not the link's any more) change nothing.
    public struct Link: Hashable, Sendable {
        /// The forward and destination edge.
        public var key: ForwardLinkKey
        /// Which connection of that link.
        public var generation: UInt64
    }

    struct State {
        var handle: Handle
        var generation: UInt64
        var channels: Set<String> = []
        var awaitingKeyframe: Set<String> = []

        mutating func route(
            targets: [ForwardTarget], from index: Int, video: Bool, keyframe: Bool, into channels: inout [String],
            ready: (Handle) -> Bool
        ) -> Handle? {
            guard ready(handle) else { return nil }
            channels.removeAll(keepingCapacity: true)
            let endpoint = targets[index].edge.endpoint
            for other in targets[index...] where other.edge.endpoint == endpoint {
                if video, !awaitingKeyframe.isEmpty, awaitingKeyframe.contains(other.channel) {
                    guard keyframe else { continue }
                    awaitingKeyframe.remove(other.channel)
                }
                channels.append(other.channel)
            }
            return handle
        }
    }

    private var links: [ForwardLinkKey: State] = [:]
    private var lastGeneration: UInt64 = 0

    /// No link.
    public init() {}

    /// Every link's connection, for their timers.
    public var all: [(link: Link, handle: Handle)] {
        links.map { (Link(key: $0.key, generation: $0.value.generation), $0.value.handle) }
    }

    /// The connection of the link of `key` to `endpoint`, if there is one.
    public func handle(of key: ForwardKey, to endpoint: String) -> Handle? {
        links[ForwardLinkKey(key: key, endpoint: endpoint)]?.handle
    }

    /// Whether `link` is its link's connection still.
    public func isCurrent(_ link: Link) -> Bool { links[link.key]?.generation == link.generation }

    /// A new connection for the link of `key` to `endpoint` (there was none): it carries the
    /// joins from now on.
    public mutating func opened(_ handle: Handle, for key: ForwardKey, to endpoint: String) -> Link {
        lastGeneration += 1
        let linkKey = ForwardLinkKey(key: key, endpoint: endpoint)
        links[linkKey] = State(handle: handle, generation: lastGeneration)
        return Link(key: linkKey, generation: lastGeneration)
    }

    /// `destination` is joined over the link of `key` to `endpoint`: its video starts at a
    /// keyframe. Nil if there is no such link (``opened(_:for:to:)`` first).
    public mutating func join(_ destination: String, of key: ForwardKey, to endpoint: String) -> (link: Link, handle: Handle)? {
        let linkKey = ForwardLinkKey(key: key, endpoint: endpoint)
        guard var state = links[linkKey] else { return nil }
        state.channels.insert(destination)
        state.awaitingKeyframe.insert(destination)
        links[linkKey] = state
        return (Link(key: linkKey, generation: state.generation), state.handle)
    }

    /// `destination` leaves the link of `key` to `endpoint`, or the destination edge ended its
    /// connection there, or refused its join (`on`: that connection only). Nil if it did not use
    /// the link: nothing to leave.
    @discardableResult
    public mutating func remove(_ destination: String, of key: ForwardKey, to endpoint: String, on link: Link? = nil) -> (link: Link, handle: Handle)? {
        let linkKey = ForwardLinkKey(key: key, endpoint: endpoint)
        guard var state = links[linkKey], link == nil || link?.generation == state.generation,
            state.channels.remove(destination) != nil
        else { return nil }
        state.awaitingKeyframe.remove(destination)
        links[linkKey] = state
        return (Link(key: linkKey, generation: state.generation), state.handle)
    }

    /// Forgets `link` if it is current and carries no destination: the shell closes it then.
    public mutating func closeIfUnused(_ link: Link) -> Handle? {
        guard let state = links[link.key], state.generation == link.generation, state.channels.isEmpty else { return nil }
        links[link.key] = nil
        return state.handle
    }

    /// Forgets `link`, broken; false if it was not current (nothing to carry out).
    public mutating func broke(_ link: Link) -> Bool {
        guard isCurrent(link) else { return false }
        links[link.key] = nil
        return true
    }

    // MARK: - The frame path

    /// The destinations on `targets[index]`'s edge that get a frame of `key`'s, written into
    /// `channels` (emptied first, its storage reused: no allocation per frame once warm), with
    /// the link's connection; nil if there is no link to that edge or `ready` says its connection
    /// cannot send yet (nothing changes then). A video destination that awaits a keyframe gets
    /// none until one comes.
    public mutating func route(
        _ key: ForwardKey, targets: [ForwardTarget], from index: Int, video: Bool, keyframe: Bool,
        into channels: inout [String], ready: (Handle) -> Bool
    ) -> Handle? {
        // In place (no copy of the link's sets): the frame path runs for every frame.
        links[ForwardLinkKey(key: key, endpoint: targets[index].edge.endpoint)]?.route(
            targets: targets, from: index, video: video, keyframe: keyframe, into: &channels, ready: ready) ?? nil
    }

    /// A video frame for `channels` on the link of `key` to `endpoint` was dropped at a full
    /// queue: they wait for the next keyframe.
    public mutating func dropped(_ channels: [String], of key: ForwardKey, to endpoint: String) {
        let linkKey = ForwardLinkKey(key: key, endpoint: endpoint)
        guard links[linkKey] != nil else { return }
        for channel in channels { links[linkKey]?.awaitingKeyframe.insert(channel) }
    }
}

// MARK: - What a link's answers and events mean for the forwards

extension ForwardLinks {
    /// The destination edge answered the join of `destination` over `link`: a refusal
    /// takes the destination off the link (that connection's only); the book hears the answer.
    /// The shell carries out the book's directives, then closes the link if it carries nothing
    /// (``closeIfUnused(_:)``: a redirect may join again over it first).
    public mutating func joinAnswered(
        _ destination: String, over link: Link, attempt: UInt64, _ outcome: Result<Void, ShowroomError>, book: inout ForwardBook,
        now: Duration
    ) -> [ForwardDirective] {
        if case .failure = outcome { remove(destination, of: link.key.key, to: link.key.endpoint, on: link) }
        return book.joined(link.key.key, destination: destination, attempt: attempt, outcome, now: now)
    }

    /// The destination edge `edge` ended `destination`'s connection on `link`
    /// (`CHANNEL_CONNECTION_CLOSED`: the same uid joined there, the token ran out, a ban): it
    /// leaves the link and fails in the book (``ForwardBook/closed(_:destination:on:_:now:)``).
    /// The shell then closes the link if it carries nothing (``closeIfUnused(_:)``).
    public mutating func connectionClosed(
        _ destination: String, over link: Link, edge: ForwardEdge, _ reason: ShowroomError, book: inout ForwardBook, now: Duration
    ) -> [ForwardDirective] {
        remove(destination, of: link.key.key, to: link.key.endpoint, on: link)
        return book.closed(link.key.key, destination: destination, on: edge, reason, now: now)
    }
}

extension ForwardLinks: Sendable where Handle: Sendable {}
extension ForwardLinks.State: Sendable where Handle: Sendable {}
