/// A change in the local view of one member, for logs, metrics and the status tool: a member
/// appeared, changed state, or published new metadata.
public struct MemberChange: Sendable, Equatable {
    /// The member after the change.
    public var member: Member
    /// Its state before the change; `nil` when the member was not known before.
    public var previousState: MemberState?
    /// True when the member's metadata changed (e.g. a load refresh) rather than (only) its state.
    public var metadataChanged: Bool

    /// Creates a change record.
    ///
    /// - Parameters:
    ///   - member: The member after the change.
    ///   - previousState: Its state before; `nil` if it was unknown.
    ///   - metadataChanged: Whether its metadata changed.
    public init(member: Member, previousState: MemberState?, metadataChanged: Bool = false) {
        self.member = member
        self.previousState = previousState
        self.metadataChanged = metadataChanged
    }
}
