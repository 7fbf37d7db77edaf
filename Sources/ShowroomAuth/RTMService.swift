/// The RTM (signaling, type 2) service of an AccessToken2 token: which user may log in, until when.
public struct RTMService: Sendable, Hashable {
    /// AccessToken2's number for this service.
    public static let serviceType: UInt16 = 2

    /// The user id that may log in.
    public var userID: String
    /// Privilege number → expiry in seconds after the token's issue time (0: as long as the
    /// token). Numbers this build does not know are kept.
    public var privileges: [UInt16: UInt32]

    /// Creates a service for a user.
    ///
    /// - Parameters:
    ///   - userID: The user id that may log in.
    ///   - privileges: Privilege → expiry in seconds after the issue time (0: as long as the token).
    public init(userID: String, privileges: [RTMPrivilege: UInt32] = [:]) {
        self.userID = userID
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
    public mutating func addPrivilege(_ privilege: RTMPrivilege, expire: UInt32) {
        privileges[privilege.rawValue] = expire
    }

    /// The privilege's expiry in seconds after the issue time (0: as long as the token), or
    /// `nil` if the token does not grant it.
    public subscript(privilege: RTMPrivilege) -> UInt32? {
        privileges[privilege.rawValue]
    }

    func pack(into writer: inout ByteWriter) throws(TokenError) {
        try writer.privileges(privileges, "the RTM privileges")
        try writer.string(userID, "the RTM user id")
    }

    static func unpack(from reader: inout ByteReader) throws(TokenError) -> RTMService {
        let privileges = try reader.privileges("RTM privileges")
        var service = RTMService(userID: try reader.string("the RTM user id"))
        service.privileges = privileges
        return service
    }
}
