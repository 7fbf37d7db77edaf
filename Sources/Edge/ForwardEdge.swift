/// An edge another edge links to: a forward destination channel's edge, as a placement names it,
/// or a relayed channel's origin (``RelayOrigin``).
public struct ForwardEdge: Sendable, Hashable, CustomStringConvertible {
    /// Its node id.
    public var id: String
    /// Its client endpoint, where the link connects.
    public var endpoint: String
    /// Its client CURVE public key (Z85), empty if it does not encrypt client links.
    public var curvePublicKey: String

    /// Creates an edge address.
    public init(id: String, endpoint: String, curvePublicKey: String = "") {
        self.id = id
        self.endpoint = endpoint
        self.curvePublicKey = curvePublicKey
    }

    /// `edge-2 (tcp://…)`.
    public var description: String { "\(id) (\(endpoint))" }
}
