/// How often one user may start calls: a caller that dials, cancels and dials again in a loop
/// would otherwise make the cluster mint, ring and seal a call channel each time. At most
/// ``limit`` dials in any ``windowMs``; pure, with the time passed in.
public struct DialRateLimit: Sendable {
    /// Dials allowed per window.
    public let limit: Int
    /// The window's length in milliseconds.
    public let windowMs: Int64
    private var recent: [UInt32: [Int64]] = [:]

    /// A limit of `limit` dials per `windowMs` (default 10 per 10 s).
    public init(limit: Int = 10, windowMs: Int64 = 10_000) {
        self.limit = max(1, limit)
        self.windowMs = max(1, windowMs)
    }

    /// Whether `uid` may dial now; counts the dial when it may.
    public mutating func admit(_ uid: UInt32, nowMs: Int64) -> Bool {
        var times = recent[uid, default: []].filter { nowMs - $0 < windowMs }
        guard times.count < limit else {
            recent[uid] = times
            return false
        }
        times.append(nowMs)
        recent[uid] = times
        return true
    }

    /// When `uid` may dial again (ms), if it may not now.
    public func nextAllowedMs(_ uid: UInt32, nowMs: Int64) -> Int64? {
        let times = recent[uid, default: []].filter { nowMs - $0 < windowMs }
        return times.count < limit ? nil : times[times.count - limit] + windowMs
    }

    /// Forgets users that have not dialled within the window (keeps the table small).
    public mutating func purge(nowMs: Int64) {
        recent = recent.filter { _, times in times.contains { nowMs - $0 < windowMs } }
    }

    /// Users with dials in the table.
    public var trackedUsers: Int { recent.count }
}
