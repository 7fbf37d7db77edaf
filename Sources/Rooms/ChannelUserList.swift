import ShowroomWire

/// Who is in a channel, from the answers of the edges that host it (its origin and its relays):
/// what the server API's user lists show. Pure.
public enum ChannelUserList {
    /// Audience members listed at most (Agora's user list stops at 10,000; the count goes on).
    public static let maxAudienceListed = 10_000

    /// The edges' answers as one: broadcasters first, then the audience, each by join time; a user
    /// connected on two edges at once (moving between them) once, as its earliest join and as a
    /// broadcaster if either connection is one.
    ///
    /// - Parameters:
    ///   - answers: The answers of the edges that answered.
    ///   - unanswered: The edges that did not, named in the result.
    public static func merged(_ answers: [RoomChannelUsersResponse], unanswered: [String]) -> RoomChannelUsersResponse {
        var byUID: [UInt32: RoomChannelUser] = [:]
        var audienceTotal: UInt32 = 0
        var exists = false
        for answer in answers {
            exists = exists || answer.exists
            audienceTotal &+= answer.audienceTotal
            for user in answer.users {
                guard var kept = byUID[user.uid] else {
                    byUID[user.uid] = user
                    continue
                }
                if user.joinedAtMs < kept.joinedAtMs {
                    kept.joinedAtMs = user.joinedAtMs
                    kept.edge = user.edge
                }
                kept.broadcaster = kept.broadcaster || user.broadcaster
                byUID[user.uid] = kept
            }
        }
        let ordered = byUID.values.sorted {
            ($0.joinedAtMs, $0.uid) < ($1.joinedAtMs, $1.uid)
        }
        var result = RoomChannelUsersResponse()
        result.exists = exists
        result.users = ordered.filter(\.broadcaster) + ordered.filter { !$0.broadcaster }.prefix(maxAudienceListed)
        // A listed audience member on two edges (or a broadcaster on the other) was counted by both.
        let listedEntries = answers.reduce(0) { $0 + $1.users.count { !$0.broadcaster } }
        let distinctAudience = ordered.count { !$0.broadcaster }
        let duplicates = max(0, listedEntries - distinctAudience)
        result.audienceTotal = UInt32(clamping: max(distinctAudience, Int(audienceTotal) - duplicates))
        result.unansweredEdges = unanswered.sorted()
        return result
    }
}
