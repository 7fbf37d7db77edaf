/// What an RTM (signaling, service type 2) token lets its holder do, with AccessToken2's numbering.
public enum RTMPrivilege: UInt16, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Log in to signaling as the token's user id.
    case login = 1

    /// The privilege's name as in the reference builders: "login".
    public var description: String { "login" }
}
