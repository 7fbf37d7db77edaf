#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A ban a room-coordinator asked the edge to enforce: the uid may not use the listed privileges in
/// the channel until the ban ends (``ChannelPlane/applyBans(_:now:)``).
///
/// The end is given twice: ``until`` on the plane's monotonic clock decides, ``untilMs`` (wall
/// clock, ms since the Unix epoch, as the coordinator sent it) is what users are told. The shell
/// converts once, when the ban arrives: `until = now + (untilMs − wall-clock now)`, as it does for
/// token expiries.
public struct ChannelBan: Sendable, Hashable, CustomStringConvertible {
    /// The channel.
    public var channel: String
    /// The banned user.
    public var uid: UInt32
    /// What is banned: ``Privilege/join`` (no joining, and present connections are closed),
    /// ``Privilege/publishAudio``, ``Privilege/publishVideo`` (no publishing that kind, no becoming
    /// broadcaster).
    public var privileges: Set<Privilege>
    /// When the ban ends, on the plane's clock.
    public var until: Duration
    /// When the ban ends, in ms since the Unix epoch.
    public var untilMs: Int64
    /// Only connections from this IP address (``IPAddress/canonical(_:)``); "" any address.
    public var ip: String

    /// Creates a ban.
    ///
    /// - Parameters:
    ///   - channel: The channel.
    ///   - uid: The user.
    ///   - privileges: What is banned.
    ///   - until: The end on the plane's clock.
    ///   - untilMs: The end in ms since the Unix epoch, for messages.
    ///   - ip: Only connections from this address; "" any.
    public init(channel: String, uid: UInt32, privileges: Set<Privilege>, until: Duration, untilMs: Int64, ip: String = "") {
        self.channel = channel
        self.uid = uid
        self.privileges = privileges
        self.until = until
        self.untilMs = untilMs
        self.ip = ip
    }

    /// A lifted ban (no privilege listed): it kicks nobody and is forgotten; publishing it
    /// stopped may resume.
    public var isLifted: Bool { privileges.isEmpty }

    /// Whether the ban is of `uid` connected from `address` (a ban of uid 0 is of everyone, one
    /// with no ``ip`` of every address; a connection whose address is not known — another edge's
    /// link, a stand-in — matches no address ban).
    public func matches(uid: UInt32, address: String?) -> Bool {
        (self.uid == 0 || self.uid == uid) && (ip.isEmpty || ip == address)
    }

    /// True if the uid may not join (or stay in) the channel.
    public var bansJoining: Bool { privileges.contains(.join) }

    /// True if the uid may not publish `kind`. A join ban bans everything.
    ///
    /// - Parameter kind: A track kind.
    public func bansPublishing(_ kind: TrackKind) -> Bool {
        bansJoining || privileges.contains(.publish(kind))
    }

    /// True if the uid may not become broadcaster: it is banned from publishing audio or video.
    public var bansBroadcasting: Bool { bansPublishing(.audio) || bansPublishing(.video) }

    /// True while the ban holds.
    ///
    /// - Parameter now: The current clock value.
    public func holds(at now: Duration) -> Bool { now < until }

    /// The end of the ban as people read it: an ISO 8601 UTC time.
    public var endDescription: String {
        Date(timeIntervalSince1970: Double(untilMs) / 1000).ISO8601Format()
    }

    /// `uid 7 in show: join, publish-audio until 2025-01-01T00:00:00Z`.
    public var description: String {
        let names = Privilege.allCases.filter { privileges.contains($0) }.map(\.description)
        var who = uid == 0 ? "everyone" : "uid \(uid)"
        if !ip.isEmpty { who += " from \(ip)" }
        let channel = self.channel.isEmpty ? "every channel" : self.channel
        return "\(who) in \(channel): \(names.joined(separator: ", ")) until \(endDescription)"
    }

    struct Key: Hashable, Comparable, Sendable {
        var channel: String
        var uid: UInt32
        var ip: String = ""

        static func < (a: Key, b: Key) -> Bool { (a.channel, a.uid, a.ip) < (b.channel, b.uid, b.ip) }
    }

    var key: Key { Key(channel: channel, uid: uid, ip: ip) }
}
