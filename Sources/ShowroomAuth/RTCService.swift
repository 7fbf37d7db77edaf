/// The RTC service (type 1) of an AccessToken2 token: which channel, which user, and the
/// privileges with their expiries.
///
/// The uid travels as a decimal string (uid 0 as the empty string), which is also how string
/// user accounts are carried; an empty ``uid`` lets any uid use the token and an empty
/// ``channelName`` any channel (a wildcard token).
public struct RTCService: Sendable, Hashable {
    /// AccessToken2's number for this service.
    public static let serviceType: UInt16 = 1

    /// The channel the token is for; empty for any channel.
    public var channelName: String
    /// The user the token is for: a uid in decimal or a user account; empty for any user.
    public var uid: String
    /// Privilege number → expiry in seconds after the token's issue time (0: as long as the
    /// token). Numbers this build does not know are kept so that nothing read is lost.
    public var privileges: [UInt16: UInt32]

    /// Creates a service for a numeric uid; uid 0 means any uid.
    ///
    /// - Parameters:
    ///   - channelName: The channel; empty for any channel.
    ///   - uid: The user id; 0 for any user.
    ///   - privileges: Privilege → expiry in seconds after the issue time (0: as long as the token).
    public init(channelName: String, uid: UInt32, privileges: [RTCPrivilege: UInt32] = [:]) {
        // The reference writes uid 0 as "" rather than "0": that is what makes it "any uid".
        self.init(channelName: channelName, account: uid == 0 ? "" : String(uid), privileges: privileges)
    }

    /// Creates a service for a string user account (carried as is; empty means any user).
    ///
    /// - Parameters:
    ///   - channelName: The channel; empty for any channel.
    ///   - account: The user account.
    ///   - privileges: Privilege → expiry in seconds after the issue time (0: as long as the token).
    public init(channelName: String, account: String, privileges: [RTCPrivilege: UInt32] = [:]) {
        self.channelName = channelName
        self.uid = account
        self.privileges = [:]
        for (privilege, expire) in privileges {
            self.privileges[privilege.rawValue] = expire
        }
    }

    /// Adds a privilege or replaces its expiry.
    ///
    /// - Parameters:
    ///   - privilege: The privilege.
    ///   - expire: Seconds after the token's issue time; 0 for as long as the token.
    public mutating func addPrivilege(_ privilege: RTCPrivilege, expire: UInt32) {
        privileges[privilege.rawValue] = expire
    }

    /// The privilege's expiry in seconds after the issue time (0: as long as the token), or
    /// `nil` if the token does not grant it.
    public subscript(privilege: RTCPrivilege) -> UInt32? {
        privileges[privilege.rawValue]
    }

    /// Whether the token works in any channel.
    public var isWildcardChannel: Bool { channelName.isEmpty }

    /// Whether any uid may use the token.
    public var isWildcardUid: Bool { uid.isEmpty }

    /// Whether the service is for `channel` (or any channel).
    func covers(channel: String) -> Bool {
        channelName.isEmpty || channelName == channel
    }

    /// Whether the service is for `account` (or any user).
    func covers(account: String) -> Bool {
        uid.isEmpty || uid == account
    }

    func pack(into writer: inout ByteWriter) throws(TokenError) {
        try writer.privileges(privileges, "the RTC privileges")
        try writer.string(channelName, "the channel name")
        try writer.string(uid, "the uid")
    }

    static func unpack(from reader: inout ByteReader) throws(TokenError) -> RTCService {
        let privileges = try reader.privileges("RTC privileges")
        let channel = try reader.string("the RTC channel name")
        let uid = try reader.string("the RTC uid")
        var service = RTCService(channelName: channel, account: uid)
        service.privileges = privileges
        return service
    }
}
