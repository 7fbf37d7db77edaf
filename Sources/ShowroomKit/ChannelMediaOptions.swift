import Edge

/// What one channel connection publishes and subscribes to (`ChannelMediaOptions` in the seeds):
/// the edge's own partial options update, so what the app sets is what goes on the wire.
///
/// On join, `nil` fields take the role's default (a broadcaster publishes audio, video and data;
/// everyone auto-subscribes to audio and video). In ``ShowroomEngine/updateChannelEx(options:connection:)``
/// `nil` fields keep their current value and a non-nil `role` is a role switch.
public typealias ChannelMediaOptions = MediaOptionsUpdate

extension MediaOptionsUpdate {
    /// A broadcaster with the defaults: publishes audio, video and data, subscribes to everything.
    public static var broadcaster: MediaOptionsUpdate { MediaOptionsUpdate(role: .broadcaster) }
    /// An audience member with the defaults: subscribes to everything, publishes nothing.
    public static var audience: MediaOptionsUpdate { MediaOptionsUpdate(role: .audience) }

    /// The role a join with these options takes: audience unless said otherwise, as on the wire.
    public var joinRole: ClientRole { role ?? .audience }

    /// The options a join with these options ends up with on the edge.
    public var joinOptions: MediaOptions {
        MediaOptions.defaults(for: joinRole).applying(self)
    }
}
