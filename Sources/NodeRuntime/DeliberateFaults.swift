/// Rules a simulation breaks on purpose, to prove that its checks catch a broken rule (a
/// mutant, in the testing literature). Empty, as every process runs it, it changes nothing; no
/// flag or configuration key of a server process sets it.
public struct DeliberateFaults: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A coordinator answers a write (a room created, an event numbered) before its successor
    /// holds the write, so the owner's death can lose what a client was told is done.
    public static let answerBeforeReplicated = DeliberateFaults(rawValue: 1 << 0)
    /// A coordinator writes while it sees less than half of the cluster, so both sides of a
    /// partition write, and what one side told its clients is lost once it heals.
    public static let writeWithoutMajority = DeliberateFaults(rawValue: 1 << 1)
}
