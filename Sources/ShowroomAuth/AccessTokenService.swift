/// One service of an AccessToken2 token.
///
/// RTC and RTM are modelled; any other type (streaming 3, FPA 4, chat 5, ...) is kept as raw
/// bytes so that a token carrying it still parses and its signature still verifies.
public enum AccessTokenService: Sendable, Hashable {
    /// Channel access: join and publish privileges.
    case rtc(RTCService)
    /// Signaling login.
    case rtm(RTMService)
    /// A service type this build does not model: its number and the bytes that follow the number.
    ///
    /// AccessToken2 does not delimit services, so a parsed token's unknown service is the last
    /// one read and its `payload` also holds every service after it. When building, `payload` is
    /// written as is after the type.
    case other(type: UInt16, payload: [UInt8])

    /// AccessToken2's number for the service.
    public var type: UInt16 {
        switch self {
        case .rtc: return RTCService.serviceType
        case .rtm: return RTMService.serviceType
        case .other(let type, _): return type
        }
    }

    func pack(into writer: inout ByteWriter) throws(TokenError) {
        writer.uint16(type)
        switch self {
        case .rtc(let service): try service.pack(into: &writer)
        case .rtm(let service): try service.pack(into: &writer)
        case .other(_, let payload): writer.append(payload)
        }
    }
}
