/// The role an RTC token is built for, numbered as the reference builders' `Role`.
public enum RTCRole: Int, Sendable, Hashable, CaseIterable {
    /// A host: join plus publish audio, video and data.
    case publisher = 1
    /// An audience member: join only (subscribing needs no privilege of its own).
    case subscriber = 2

    /// The privileges a token for this role carries, as the reference `buildTokenWithUid` grants them.
    public var privileges: [RTCPrivilege] {
        switch self {
        case .publisher: return [.joinChannel, .publishAudioStream, .publishVideoStream, .publishDataStream]
        case .subscriber: return [.joinChannel]
        }
    }
}
