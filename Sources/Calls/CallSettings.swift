/// How long calls may ring, be away and last, and how much a call may carry.
public struct CallSettings: Sendable, Equatable {
    /// How long calling + connecting may take before the call ends on both sides (CallAPI's
    /// `callTimeoutMillisecond`, default 15 s).
    public var callingTimeoutMs: Int64 = 15_000
    /// How long a party may be away from the call's channel (or from signaling) before the call
    /// ends and it is kicked (default 30 s).
    public var leaveGraceMs: Int64 = 30_000
    /// The longest a connected call lasts; its tokens expire with it (default 4 h).
    public var maxCallMs: Int64 = 4 * 3_600_000
    /// How long an ended call is remembered, so that late requests get "ended" rather than
    /// "unknown" (default 60 s).
    public var retainEndedMs: Int64 = 60_000

    /// The longest calling timeout a call may ask for (10 minutes).
    public static let maxCallingTimeoutMs: Int64 = 600_000
    /// The most extension entries a call carries.
    public static let maxExtensionEntries = 32
    /// The most bytes of extension keys and values together.
    public static let maxExtensionBytes = 4096
    /// The longest reject or hang-up reason, in bytes.
    public static let maxReasonBytes = 256

    /// Settings with the defaults.
    public init() {}

    /// Refuses an extension with too many entries or bytes.
    public static func validate(_ extensionInfo: [String: String]) throws(CallRefusal) {
        guard extensionInfo.count <= maxExtensionEntries else {
            throw CallRefusal(.invalidArgument,
                              "a call carries at most \(maxExtensionEntries) extension entries, not \(extensionInfo.count)")
        }
        let bytes = extensionInfo.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard bytes <= maxExtensionBytes else {
            throw CallRefusal(.invalidArgument, "a call's extension holds at most \(maxExtensionBytes) bytes, not \(bytes)")
        }
    }

    /// Refuses a reject or hang-up reason that is too long.
    public static func validate(reason: String) throws(CallRefusal) {
        guard reason.utf8.count <= maxReasonBytes else {
            throw CallRefusal(.invalidArgument, "a reason holds at most \(maxReasonBytes) bytes, not \(reason.utf8.count)")
        }
    }
}
