/// Chooses whom to probe: round-robin over a shuffled list of the other members, reshuffled at
/// the end of every pass (SWIM's "round-robin probe target selection"), so every member is probed
/// by every other within one pass — a bounded worst-case detection time — while the order stays
/// unpredictable. New members are inserted at a random position so they are not all probed last.
struct ProbeScheduler: Sendable {
    private(set) var order: [MemberID] = []
    private var index = 0

    /// Adds a member at a random position (not before the current one: it is probed this pass).
    mutating func insert(_ id: MemberID, using rng: inout some RandomNumberGenerator) {
        guard !order.contains(id) else { return }
        let position = Int.random(in: index...order.count, using: &rng)
        order.insert(id, at: position)
    }

    /// Removes a forgotten member.
    mutating func remove(_ id: MemberID) {
        guard let position = order.firstIndex(of: id) else { return }
        order.remove(at: position)
        if position < index { index -= 1 }
    }

    /// The next member to probe for which `isEligible` holds (skipping dead and left ones), or
    /// `nil` if none is.
    mutating func next(
        using rng: inout some RandomNumberGenerator,
        where isEligible: (MemberID) -> Bool
    ) -> MemberID? {
        var checked = 0
        while checked < order.count {
            if index >= order.count {
                order.shuffle(using: &rng)
                index = 0
            }
            let id = order[index]
            index += 1
            checked += 1
            if isEligible(id) { return id }
        }
        return nil
    }
}
