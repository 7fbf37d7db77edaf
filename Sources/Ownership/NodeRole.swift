import ShowroomWire

/// The three kinds of Showroom server process.
public enum NodeRole: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Hosts channels and fans media out to subscribers.
    case edge
    /// Owns rooms, channel placement, PK and co-host interactions.
    case coordinator
    /// Owns presence and 1v1 call routing.
    case callsignal

    /// The role as it travels on the wire.
    public var wire: WireNodeRole {
        switch self {
        case .edge: .edge
        case .coordinator: .coordinator
        case .callsignal: .callsignal
        }
    }

    /// The role a wire value names, or nil for an unknown one.
    public init?(wire: WireNodeRole) {
        switch wire {
        case .edge: self = .edge
        case .coordinator: self = .coordinator
        case .callsignal: self = .callsignal
        default: return nil
        }
    }

    /// The name of the role's executable.
    public var executableName: String { "showroom-\(rawValue)" }

    public var description: String { rawValue }
}
