/// Hard limits of one edge, each refused with its own error code. The defaults suit a 2-core edge
/// serving show-room channels (one or a few hosts, hundreds of viewers).
public struct EdgeLimits: Sendable, Hashable {
    /// Largest media payload accepted (`ERROR_CODE_FRAME_TOO_LARGE`). 1 MiB is several times a
    /// 1080p VP8 keyframe.
    public var maxFrameBytes: Int
    /// Channel connections one session may hold (`ERROR_CODE_TOO_MANY_CHANNELS`). 20 covers the
    /// instant-switch pattern (current room plus pre-joined neighbours) and PK.
    public var maxChannelsPerSession: Int
    /// Connections in one channel (`ERROR_CODE_CHANNEL_FULL`); every connection is a subscriber.
    public var maxSubscribersPerChannel: Int
    /// Broadcasters in one channel (`ERROR_CODE_TOO_MANY_PUBLISHERS`); 17 as in the commercial
    /// services' live-broadcast profile.
    public var maxPublishersPerChannel: Int
    /// Largest stream message (`ERROR_CODE_STREAM_MESSAGE_TOO_LARGE`); 1 KiB as in the seeds' SDKs.
    public var maxStreamMessageBytes: Int
    /// Stream messages per second per connection (`ERROR_CODE_STREAM_MESSAGE_RATE_LIMITED`).
    public var maxStreamMessagesPerSecond: Int
    /// Stream message bytes per second per connection (`ERROR_CODE_STREAM_MESSAGE_RATE_LIMITED`).
    public var maxStreamMessageBytesPerSecond: Int
    /// Largest message (all frames together) the edge reads from a client (`ERROR_CODE_TOO_LARGE`,
    /// the message is dropped and the connection stays). 1.5 MiB: a largest media frame plus its
    /// header, with room to spare; control messages are a few hundred bytes.
    /// ``connectionCloseBytes`` is 4 times this.
    public var maxMessageBytes: Int

    /// How many times ``maxMessageBytes`` a single frame may be before ZeroMQ closes the
    /// connection without reading it (`ZMQ_MAXMSGSIZE`; `SessionLimits.max_message_bytes`).
    public static let connectionCloseMultiple = 4

    /// The frame size at which ZeroMQ closes a client's connection instead of handing the message
    /// over: ``connectionCloseMultiple`` × ``maxMessageBytes``. Between the two, a message is
    /// read, refused with `ERROR_CODE_TOO_LARGE` and dropped.
    public var connectionCloseBytes: Int {
        let (bytes, overflow) = maxMessageBytes.multipliedReportingOverflow(by: Self.connectionCloseMultiple)
        return overflow ? .max : bytes
    }

    /// Creates limits; every parameter defaults to the documented value.
    public init(
        maxFrameBytes: Int = 1 << 20,
        maxChannelsPerSession: Int = 20,
        maxSubscribersPerChannel: Int = 2000,
        maxPublishersPerChannel: Int = 17,
        maxStreamMessageBytes: Int = 1024,
        maxStreamMessagesPerSecond: Int = 60,
        maxStreamMessageBytesPerSecond: Int = 30 * 1024,
        maxMessageBytes: Int = 3 << 19
    ) {
        self.maxFrameBytes = maxFrameBytes
        self.maxChannelsPerSession = maxChannelsPerSession
        self.maxSubscribersPerChannel = maxSubscribersPerChannel
        self.maxPublishersPerChannel = maxPublishersPerChannel
        self.maxStreamMessageBytes = maxStreamMessageBytes
        self.maxStreamMessagesPerSecond = maxStreamMessagesPerSecond
        self.maxStreamMessageBytesPerSecond = maxStreamMessageBytesPerSecond
        self.maxMessageBytes = maxMessageBytes
    }
}
