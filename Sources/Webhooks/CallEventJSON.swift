import ShowroomWire

/// A call event as JSON: the webhook body for calls started (201), connected (202) and ended
/// (203), also what `showroomctl events` prints.
///
/// ```json
/// {"noticeId":"1001-9f…-203","eventType":203,"notifyMs":1767000000123,"payload":{"callId":"1001-9f…",
///  "caller":2001,"callee":1001,"type":"video","channelName":"call-1001-…","startedAtMs":1767000000000,
///  "connectedAtMs":1767000000090,"endedAtMs":1767000060000,"durationMs":59910,"endReason":"hungUp",
///  "endedBy":2001,"node":"callsignal-1"}}
/// ```
///
/// Keys come in this order, without spaces, ASCII only (as ``ChannelEventJSON``). Times are ms since
/// the Unix epoch, 0 for a step the call never reached.
public enum CallEventJSON {
    /// The compact, ASCII-only JSON of `event`.
    public static func encode(_ event: SignalCallNotification) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(320)
        out.append(contentsOf: #"{"noticeId":"#.utf8)
        ChannelEventJSON.appendString(event.noticeID, to: &out)
        out.append(contentsOf: #","eventType":\#(event.eventType),"notifyMs":\#(event.notifyMs),"payload":{"callId":"#.utf8)
        ChannelEventJSON.appendString(event.callID, to: &out)
        out.append(contentsOf: #","caller":\#(event.caller),"callee":\#(event.callee),"type":"#.utf8)
        out.append(contentsOf: (event.type == .audio ? #""audio""# : #""video""#).utf8)
        out.append(contentsOf: #","channelName":"#.utf8)
        ChannelEventJSON.appendString(event.channel, to: &out)
        out.append(contentsOf: #","startedAtMs":\#(event.startedAtMs),"connectedAtMs":\#(event.connectedAtMs)"#.utf8)
        out.append(contentsOf: #","endedAtMs":\#(event.endedAtMs),"durationMs":\#(event.durationMs),"endReason":"#.utf8)
        ChannelEventJSON.appendString(event.endReason, to: &out)
        out.append(contentsOf: #","endedBy":\#(event.endedBy),"node":"#.utf8)
        ChannelEventJSON.appendString(event.nodeID, to: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }
}

extension WebhookEvent {
    /// A call event (``CallEventJSON``), in order with the other events of its call.
    public init(_ event: SignalCallNotification) {
        self.init(noticeID: event.noticeID, orderKey: event.channel, body: CallEventJSON.encode(event))
    }
}
