/// How a relay edge's link session (the client session a relay opens on a channel's origin edge
/// to pull the channel) names itself: a client id prefix and a uid from a range no app uses. The
/// origin counts and reports neither the link's connections nor its joins and leaves, and takes
/// its `RELAY_KEYFRAME_REQUEST`s; both marks are needed, so a client that borrows the prefix with
/// an ordinary uid is still counted.
public enum RelayLinkIdentity {
    /// The client id prefix of relay link sessions.
    public static let clientIDPrefix = "showroom-relay-link/"
    /// The first uid of the reserved relay range; a relay's links join as `firstUID + n`.
    public static let firstUID: UInt32 = 0xFFFF_0000

    /// Whether a session's client id is a relay link's.
    public static func isLink(clientID: String) -> Bool { clientID.hasPrefix(clientIDPrefix) }

    /// Whether `uid` is in the reserved relay range.
    public static func isLinkUID(_ uid: UInt32) -> Bool { uid >= firstUID }
}
