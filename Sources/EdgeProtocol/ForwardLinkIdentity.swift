/// How an edge's link session (the client session a source edge opens on a destination edge to
/// forward a broadcaster's tracks) names itself, so the destination edge tells its viewers
/// "forward stopped" rather than "quit" when the forwarded user leaves. A client that borrows the
/// prefix only changes the reason others see for its own leaves.
public enum ForwardLinkIdentity {
    /// The client id prefix of link sessions.
    public static let clientIDPrefix = "showroom-forward-link/"

    /// Whether a session's client id is a link's.
    public static func isLink(clientID: String) -> Bool { clientID.hasPrefix(clientIDPrefix) }
}
