import Foundation

/// Milliseconds since the Unix epoch, as the pure state machines take time (`nowMs`): room
/// lifetimes, placements, bans and events carry wall-clock times other processes read. Injected,
/// so that tests move time by hand.
public struct WallClock: Sendable {
    /// The current time in milliseconds since the Unix epoch.
    public let nowMs: @Sendable () -> Int64

    /// A clock that reads `nowMs`.
    public init(nowMs: @escaping @Sendable () -> Int64) {
        self.nowMs = nowMs
    }

    /// The system's clock.
    public static let system = WallClock { Int64(Date().timeIntervalSince1970 * 1000) }
}
