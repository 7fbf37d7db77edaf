/// A forward: a broadcaster (uid) of a source channel whose tracks go into other channels.
public struct ForwardKey: Sendable, Hashable, CustomStringConvertible {
    /// The source channel.
    public var channel: String
    /// The forwarded uid (the same in every destination).
    public var uid: UInt32

    /// Creates a key.
    public init(channel: String, uid: UInt32) {
        self.channel = channel
        self.uid = uid
    }

    /// `uid 7 of show`.
    public var description: String { "uid \(uid) of \(channel)" }
}
