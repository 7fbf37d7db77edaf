import ShowroomWire

/// Who is in each channel as its events have told it, by the edge runs each user is connected
/// on: what decides whether a join or a leave is news for the channel's events.
///
/// A user can be in a channel on two edges for a while: it moves (a drain, or a channel sent to
/// the edge it is placed on), or each side of a partition placed the channel. The edges' reports
/// arrive in any order, so the new edge's join can come before the old edge's leave, or an old
/// join held through a partition after a new one. The channel's events say the user joined when
/// its first connection comes and left when its last one goes, whatever the order.
///
/// Runs, not edges: an edge that restarts is a new run (its activities' `origin`), and the first
/// activity of a new run of an edge forgets the old run's users (they were gone with its process).
/// Held only where the events are numbered, not replicated: a coordinator that takes a channel
/// over starts without it, and a leave of a user it never saw join is news.
public struct ChannelPresence: Sendable {
    private struct Channel: Sendable {
        /// The runs each present user is connected on (almost always one).
        var users: [UInt32: [String]] = [:]
        /// The latest run of each edge seen in the channel.
        var runs: [String: String] = [:]

        /// The run's connections are gone.
        mutating func forget(run: String) {
            for (uid, runs) in users where runs.contains(run) {
                let rest = runs.filter { $0 != run }
                users[uid] = rest.isEmpty ? nil : rest
            }
        }
    }

    private var channels: [String: Channel] = [:]

    /// Nobody anywhere.
    public init() {}

    /// How many users are present in `channel`.
    public func count(in channel: String) -> Int { channels[channel]?.users.count ?? 0 }

    /// Takes an activity an edge reported (in the edge's order).
    /// - Returns: Whether it is news for the channel's events: not a join of a user already
    ///   connected on another run, nor a leave of a connection that is not the user's last.
    public mutating func take(_ activity: RoomChannelActivity, edge: String) -> Bool {
        let run = activity.origin.isEmpty ? edge : activity.origin
        var channel = channels.removeValue(forKey: activity.channel) ?? Channel()
        defer { if !channel.users.isEmpty { channels[activity.channel] = channel } }
        if let old = channel.runs[edge], old != run { channel.forget(run: old) }
        channel.runs[edge] = run
        switch activity.type {
        case .broadcasterJoined, .audienceJoined:
            var runs = channel.users[activity.uid] ?? []
            let wasPresent = !runs.isEmpty
            if !runs.contains(run) { runs.append(run) }
            channel.users[activity.uid] = runs
            return !wasPresent
        case .broadcasterLeft, .audienceLeft:
            guard var runs = channel.users[activity.uid] else { return true }
            guard let index = runs.firstIndex(of: run) else { return false }  // connected elsewhere only
            runs.remove(at: index)
            channel.users[activity.uid] = runs.isEmpty ? nil : runs
            return runs.isEmpty
        case .channelDestroyed:
            channel.forget(run: run)
            return true
        default:
            return true
        }
    }

    /// The edges that are not `alive` any more: their users left without a word.
    public mutating func edgesGone(keeping alive: Set<String>) {
        for name in Array(channels.keys) {
            guard var channel = channels[name], channel.runs.keys.contains(where: { !alive.contains($0) }) else { continue }
            for (edge, run) in channel.runs where !alive.contains(edge) {
                channel.forget(run: run)
                channel.runs[edge] = nil
            }
            channels[name] = channel.users.isEmpty ? nil : channel
        }
    }

    /// Forgets a channel (its numbers are pruned).
    public mutating func forget(channel: String) {
        channels[channel] = nil
    }
}
