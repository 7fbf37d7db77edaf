/// Where an audience member of a busy channel goes: its origin edge (where its publishers are)
/// while the origin holds fewer than ``threshold`` of the channel's viewers, then relay edges of
/// the channel, each filled to the threshold in rendezvous order, then the least full. A join is
/// charged to its edge at once and counted until a report of that edge taken after it arrives
/// (``reportLagMs`` allowing for the report's way; at most ``chargeMs``), so a burst of joins
/// spreads before the edges' reports catch up. Pure: the caller passes the reports and the time.
public struct RelayPlanner: Sendable {
    /// Viewers of one channel an edge takes before the next edge of the channel does; 0 never
    /// places anyone on a relay.
    public var threshold: Int
    /// How long a join counts on its edge at most, without a report.
    public var chargeMs: Int64
    /// A report received this soon after a join may not count it yet.
    public var reportLagMs: Int64
    /// Joins charged per channel and edge, with when each was charged.
    private var charges: [String: [String: [Int64]]] = [:]
    /// The relay edges chosen per channel (claims from them are granted as relays).
    public private(set) var relays: [String: Set<String>] = [:]
    /// When each relay was chosen, until it reports relaying the channel: a relay chosen for a
    /// viewer who never came is forgotten after ``chargeMs``.
    private var chosenAtMs: [String: [String: Int64]] = [:]

    /// Creates a planner.
    public init(threshold: Int, chargeMs: Int64 = 10_000, reportLagMs: Int64 = 100) {
        self.threshold = threshold
        self.chargeMs = chargeMs
        self.reportLagMs = reportLagMs
    }

    /// The edge an audience member of `channel` joins.
    ///
    /// - Parameters:
    ///   - origin: The channel's origin edge.
    ///   - reported: The channel's viewers per edge, as the edges last reported.
    ///   - reportedAtMs: When each edge's last report arrived.
    ///   - candidates: The other alive edges that may relay it, in rendezvous order for the channel.
    ///   - nowMs: The current time.
    /// - Returns: `origin`, or a relay edge (remembered in ``relays``).
    public mutating func edge(for channel: String, origin: String, reported: [String: Int], reportedAtMs: [String: Int64] = [:],
                              candidates: [String], nowMs: Int64) -> String {
        var held: [String: [Int64]] = [:]
        for (edge, times) in charges[channel, default: [:]] {
            // Joins the edge's last report may not include yet.
            let since = max(nowMs - chargeMs, (reportedAtMs[edge] ?? .min / 2) - reportLagMs)
            let kept = times.filter { $0 > since }
            if !kept.isEmpty { held[edge] = kept }
        }
        func count(_ edge: String) -> Int { (reported[edge] ?? 0) + (held[edge]?.count ?? 0) }
        var chosen = origin
        if threshold > 0, count(origin) >= threshold {
            let relays = candidates.filter { $0 != origin }
            if let free = relays.first(where: { count($0) < threshold }) {
                chosen = free
            } else if let least = ([origin] + relays).min(by: { count($0) < count($1) }) {
                chosen = least
            }
        }
        held[chosen, default: []].append(nowMs)
        charges[channel] = held
        if chosen != origin, self.relays[channel, default: []].insert(chosen).inserted {
            chosenAtMs[channel, default: [:]][chosen] = nowMs
        }
        return chosen
    }

    /// Whether `edge` relays `channel` (it was chosen, or reports relaying it).
    public func isRelay(_ edge: String, of channel: String) -> Bool { relays[channel]?.contains(edge) ?? false }

    /// Takes the edges' reports: `edge` relays `channel` (true), or no longer does (false).
    public mutating func reported(_ edge: String, relays relaying: Bool, channel: String) {
        if relaying { relays[channel, default: []].insert(edge) } else { relays[channel]?.remove(edge) }
        if relays[channel]?.isEmpty == true { relays[channel] = nil }
        chosenAtMs[channel]?[edge] = nil
        if chosenAtMs[channel]?.isEmpty == true { chosenAtMs[channel] = nil }
    }

    /// Forgets joins charged longer than ``chargeMs`` ago and relays chosen that long ago that
    /// never reported relaying, so channels that are gone leave nothing behind.
    public mutating func expire(nowMs: Int64) {
        let since = nowMs - chargeMs
        charges = charges.compactMapValues { edges in
            let kept = edges.compactMapValues { times in
                let recent = times.filter { $0 > since }
                return recent.isEmpty ? nil : recent
            }
            return kept.isEmpty ? nil : kept
        }
        for (channel, chosen) in chosenAtMs {
            for (edge, at) in chosen where at <= since {
                relays[channel]?.remove(edge)
                chosenAtMs[channel]?[edge] = nil
            }
            if relays[channel]?.isEmpty == true { relays[channel] = nil }
            if chosenAtMs[channel]?.isEmpty == true { chosenAtMs[channel] = nil }
        }
    }

    /// How many channels the planner holds anything for (charged joins, chosen or reported relays).
    public var channelCount: Int { Set(charges.keys).union(relays.keys).count }

    /// Forgets a channel (its origin left, or it was removed).
    public mutating func forget(_ channel: String) {
        relays[channel] = nil
        charges[channel] = nil
        chosenAtMs[channel] = nil
    }
}
