/// Which live rooms a swiping viewer holds, as a pure value type (VideoLoaderAPI's slicing
/// handler): the room on screen with video (and audio once the scroll ended), the rooms one swipe
/// away prejoined, every other room left.
package struct SwipeWindow: Sendable, Equatable {
    /// How many rooms above and below the current one are prejoined (VideoLoaderAPI's
    /// `prejoinCount`, default 1).
    package var prejoinCount: Int
    /// The state each room of the window is in now, by channel.
    package private(set) var states: [String: AnchorState] = [:]

    /// An empty window.
    package init(prejoinCount: Int = 1) {
        self.prejoinCount = max(0, prejoinCount)
    }

    /// The viewer is at `index` of `rooms` (`settled`: the scroll ended, so the room is heard as
    /// well as seen). Returns each room whose state changes, with its new state (idle: it left the
    /// window): the room on screen first, the rooms leaving the window last.
    package mutating func focus(on index: Int, of rooms: [AnchorInfo], settled: Bool) -> [(anchor: AnchorInfo, state: AnchorState)] {
        var wanted: [String: (AnchorInfo, AnchorState)] = [:]
        if rooms.indices.contains(index) {
            for offset in -prejoinCount...prejoinCount {
                let position = index + offset
                guard rooms.indices.contains(position) else { continue }
                let room = rooms[position]
                let state: AnchorState = offset == 0 ? (settled ? .joinedWithAudioVideo : .joinedWithVideo) : .prejoined
                if state > (wanted[room.channel]?.1 ?? .idle) { wanted[room.channel] = (room, state) }
            }
        }
        // The room on screen first (its video is what the viewer waits for), then the rooms
        // prejoined around it, and the rooms that left the window last.
        var changes: [(anchor: AnchorInfo, state: AnchorState)] = []
        for (channel, (anchor, state)) in wanted.sorted(by: { ($0.value.1, $1.key) > ($1.value.1, $0.key) })
            where states[channel] != state {
            changes.append((anchor, state))
        }
        let known = Dictionary(rooms.map { ($0.channel, $0) }) { first, _ in first }
        for channel in states.keys.sorted() where wanted[channel] == nil {
            if let anchor = known[channel] ?? anchors[channel] { changes.append((anchor, .idle)) }
        }
        states = wanted.mapValues(\.1)
        anchors = wanted.mapValues(\.0)
        return changes
    }

    /// The anchors of the window's rooms (to leave them even when the room list changed).
    private var anchors: [String: AnchorInfo] = [:]
}
