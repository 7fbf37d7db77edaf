/// The relay's links to origin edges as its shell holds them: one connection per origin (by its
/// client endpoint), with the uid its session joins as. Which connection is current decides
/// whether what arrives on one is taken and whether its break matters; ``RelayBook`` decides when
/// a link opens and closes, and the shell holds each connection as an opaque `Handle`.
public struct RelayLinks<Handle: AnyObject> {
    private var links: [String: (handle: Handle, uid: UInt32)] = [:]

    /// No link.
    public init() {}

    /// Whether there is no link.
    public var isEmpty: Bool { links.isEmpty }

    /// Every link's connection, for their timers.
    public var all: [Handle] { links.values.map(\.handle) }

    /// The connection to the origin at `endpoint`, if there is one.
    public subscript(_ endpoint: String) -> Handle? { links[endpoint]?.handle }

    /// Whether `handle` is the connection to the origin at `endpoint` still (not closed or
    /// replaced since): one lookup, no allocation, for every message a link receives.
    public func isCurrent(_ handle: Handle, to endpoint: String) -> Bool { links[endpoint]?.handle === handle }

    /// A new connection to the origin at `endpoint`, its session joining as `uid`.
    public mutating func opened(_ handle: Handle, uid: UInt32, to endpoint: String) {
        links[endpoint] = (handle, uid)
    }

    /// The book closes the link to `endpoint` it opened as `uid` (``RelayDirective/closeLink(origin:uid:)``):
    /// its connection, forgotten, for the shell to end; nil if that link is gone or was opened
    /// again since under another uid.
    public mutating func close(_ endpoint: String, uid: UInt32) -> Handle? {
        guard let link = links[endpoint], link.uid == uid else { return nil }
        links[endpoint] = nil
        return link.handle
    }

    /// `handle`'s connection to `endpoint` broke: forgotten; false if it was not current (closed
    /// or replaced already: nothing to carry out).
    public mutating func broke(_ handle: Handle, to endpoint: String) -> Bool {
        guard isCurrent(handle, to: endpoint) else { return false }
        links[endpoint] = nil
        return true
    }
}

extension RelayLinks: Sendable where Handle: Sendable {}
