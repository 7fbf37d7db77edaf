import ShowroomWire

/// One webhook post as a receiver URL's queue holds it: its JSON body, the notice id receivers
/// deduplicate by, and the key its order is kept under (a channel's events go in the order they
/// were numbered; so do a call's).
public struct WebhookEvent: Sendable, Equatable {
    /// The notice id (`X-Showroom-Notice` header, and in the body).
    public var noticeID: String
    /// Events with one key are posted strictly in order.
    public var orderKey: String
    /// The JSON body.
    public var body: [UInt8]

    /// An event with `body`, posted in order with the others of `orderKey`.
    public init(noticeID: String, orderKey: String, body: [UInt8]) {
        self.noticeID = noticeID
        self.orderKey = orderKey
        self.body = body
    }

    /// A channel event (``ChannelEventJSON``), in order with its channel's others.
    public init(_ event: RoomChannelEvent) {
        self.init(noticeID: event.noticeID, orderKey: event.channel, body: ChannelEventJSON.encode(event))
    }
}
