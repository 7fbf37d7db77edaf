/// A member's id together with its cluster endpoint: what every gossip message says about its
/// sender, so the receiver can answer even a member it does not know yet.
public struct MemberAddress: Sendable, Equatable {
    /// The member's node id.
    public var id: MemberID
    /// Where gossip for it is sent (`tcp://host:port`).
    public var endpoint: String

    /// Creates an address.
    ///
    /// - Parameters:
    ///   - id: The node id.
    ///   - endpoint: Its cluster endpoint.
    public init(id: MemberID, endpoint: String) {
        self.id = id
        self.endpoint = endpoint
    }
}
