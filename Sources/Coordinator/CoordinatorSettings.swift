import NodeRuntime
import ServerAPI
import ShowroomWire

/// What only a coordinator is configured with — its database, events endpoint, webhooks, and the
/// lifetimes of rooms and placements — beside the settings every server shares
/// (``NodeConfiguration``). Filled from defaults, then the configuration file, then flags.
public struct CoordinatorSettings: Sendable, Equatable {
    /// Where the coordinator publishes room notices and channel events (a ZeroMQ PUB socket).
    /// `tcp://127.0.0.1:*` picks a free port; the bound address is announced in the membership.
    public var eventsBind: String = "tcp://127.0.0.1:*"
    /// Where the coordinator keeps its database (`<dataDirectory>/<nodeID>.sqlite`), so a restart
    /// loses no room. Relative paths are taken from the working directory.
    public var dataDirectory: String = "showroom-data"
    /// URLs the coordinator posts channel events to (JSON, signed with ``webhookSecret``).
    public var webhookURLs: [String] = []
    /// Key of the webhooks' HMAC-SHA256 signature header; empty sends them unsigned.
    public var webhookSecret: String = ""
    /// How long a room stays open after its creation.
    public var roomExpirySeconds: Int = 20 * 60
    /// How long a room's owner may be away from its channel before the room closes.
    public var ownerGraceSeconds: Int = 5 * 60
    /// How long the coordinator keeps a channel placement that no edge reports hosting.
    public var placementExpirySeconds: Int = 60
    /// Viewers of one channel an edge takes before the coordinator places the channel's next
    /// audience members on relay edges (which pull the channel from its origin); 0 keeps every
    /// viewer on the origin.
    public var relayThreshold: Int = 0
    /// Record both sides of every 1v1 call, on the edges the parties publish on.
    public var recordCalls = false
    /// Record the live rooms of these owners while they are open.
    public var recordOwners: [UInt32] = []
    /// How long a channel's user list may be served again without asking the edges, if none of
    /// them reported since (they report within about 100 ms of every change): 0 asks the edges
    /// for every request.
    public var userListKeepMs: Int = 1000
    /// The server API: where it listens, the customer keys, their request rate.
    public var api = APISettings()

    /// The defaults.
    public init() {}

    /// The keys a coordinator's configuration file may hold besides the shared ones.
    public static let fileKeys: Set<String> = Set([
        "eventsBind", "dataDirectory", "webhookURLs", "webhookSecret", "roomExpirySeconds", "ownerGraceSeconds",
        "placementExpirySeconds", "relayThreshold", "recordCalls", "recordOwners", "userListKeepMs",
    ]).union(APISettings.fileKeys)

    /// Applies the coordinator's settings in `file` (the shared ones are ``NodeConfiguration``'s).
    /// - Throws: `invalidArgument` naming the file and the key whose value is wrong.
    public mutating func apply(_ file: ConfigurationFile) throws(ShowroomError) {
        if let v = try file.value("eventsBind", as: String.self) { eventsBind = v }
        if let v = try file.value("dataDirectory", as: String.self) { dataDirectory = v }
        if let v = try file.value("webhookURLs", as: [String].self) { webhookURLs = v }
        if let v = try file.value("webhookSecret", as: String.self) { webhookSecret = v }
        if let v = try file.value("roomExpirySeconds", as: Int.self) { roomExpirySeconds = v }
        if let v = try file.value("ownerGraceSeconds", as: Int.self) { ownerGraceSeconds = v }
        if let v = try file.value("placementExpirySeconds", as: Int.self) { placementExpirySeconds = v }
        if let v = try file.value("relayThreshold", as: Int.self) { relayThreshold = v }
        if let v = try file.value("recordCalls", as: Bool.self) { recordCalls = v }
        if let v = try file.value("userListKeepMs", as: Int.self) { userListKeepMs = v }
        if let v = try file.value("recordOwners", as: [Int].self) {
            guard v.count <= 1_000, v.allSatisfy({ (1...Int(UInt32.max)).contains($0) }) else {
                throw .invalidArgument("configuration file \(file.path): recordOwners lists at most 1000 uids, each 1 to 4294967295")
            }
            recordOwners = v.map { UInt32($0) }
        }
        try api.apply(file)
    }

    /// Checks the values are usable.
    public func validate() throws(ShowroomError) {
        guard eventsBind.hasPrefix("tcp://") || eventsBind.hasPrefix("ipc://") else {
            throw .invalidArgument("eventsBind '\(eventsBind)' must start with tcp:// or ipc://")
        }
        if roomExpirySeconds < 1 { throw .invalidArgument("roomExpirySeconds must be at least 1") }
        if ownerGraceSeconds < 1 { throw .invalidArgument("ownerGraceSeconds must be at least 1") }
        if !(0...1_000_000).contains(relayThreshold) { throw .invalidArgument("relayThreshold must be 0 (off) to 1000000 viewers") }
        if placementExpirySeconds < 1 || placementExpirySeconds > 86_400 {
            throw .invalidArgument("placementExpirySeconds must be 1–86400")
        }
        if !(0...60_000).contains(userListKeepMs) { throw .invalidArgument("userListKeepMs must be 0 (ask the edges each time) to 60000") }
        if dataDirectory.isEmpty { throw .invalidArgument("dataDirectory must name a directory") }
        try api.validate()
    }
}
