/// Which rooms a preload asks the engine for (VideoLoaderAPI's `preloadChannels`): at most
/// ``maxPreloads`` at a time, never the viewer's own room or one joined already, and a room
/// preloaded within ``kept`` not again (the edge keeps its grant 30 s).
struct PreloadList {
    /// The most rooms preloaded at once.
    static let maxPreloads = 20
    /// How long a room counts as preloaded.
    static let kept = Duration.seconds(20)

    /// When each channel was last preloaded.
    private(set) var preloadedAt: [String: ContinuousClock.Instant] = [:]

    /// The rooms of `anchors` to preload now (and remembers them as preloaded); `isHeld` says
    /// whether a channel is joined already.
    mutating func choose(_ anchors: [AnchorInfo], localUID: UInt32, now: ContinuousClock.Instant,
                         isHeld: (String) -> Bool) -> [AnchorInfo] {
        preloadedAt = preloadedAt.filter { now - $0.value < Self.kept }
        var chosen: [AnchorInfo] = []
        for anchor in anchors.prefix(Self.maxPreloads)
        where anchor.uid != localUID && preloadedAt[anchor.channel] == nil && !isHeld(anchor.channel) {
            preloadedAt[anchor.channel] = now
            chosen.append(anchor)
        }
        return chosen
    }

    /// The rooms around `index` of a feed a swipe preloads: up to ``maxPreloads``, half on each side.
    static func around(_ index: Int, of rooms: [AnchorInfo]) -> [AnchorInfo] {
        Array(rooms.indices.filter { abs($0 - index) <= maxPreloads / 2 }.map { rooms[$0] }.prefix(maxPreloads))
    }
}
