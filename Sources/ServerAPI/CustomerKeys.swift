import Crypto
import Foundation
import ShowroomWire
import Synchronization

/// What a customer key may do. Every GET needs ``read``; each change needs the scope of its area.
public enum APIScope: String, CaseIterable, Sendable, Comparable {
    /// Every GET: rooms, channels, users, bans, calls, the cluster.
    case read
    /// Create, update and close rooms.
    case rooms
    /// Kicks and ban rules.
    case moderation
    /// End calls.
    case calls
    /// Start and stop recordings.
    case recording

    public static func < (lhs: APIScope, rhs: APIScope) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A business server's credentials for the server API: an id and a secret, as HTTP Basic
/// (Agora's customer id and customer secret). The cluster keeps only the secret's SHA-256: secrets
/// are random strings of at least 16 characters, which a hash guards as well as a slow one would.
public struct CustomerKey: Sendable, Equatable {
    /// The key's id (the Basic user name): 1 to 64 of `[A-Za-z0-9_-]`.
    public var id: String
    /// SHA-256 of the secret (the Basic password).
    public var secretSHA256: [UInt8]
    /// What it may do.
    public var scopes: Set<APIScope>
    /// Its own request rate, or nil for the API's.
    public var rate: RequestRate.Limit?

    /// A key; `secretSHA256` is the hash, 32 bytes.
    /// - Throws: `invalidArgument` naming what is wrong.
    public init(id: String, secretSHA256: [UInt8], scopes: Set<APIScope>, rate: RequestRate.Limit? = nil) throws(ShowroomError) {
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy(CustomerKey.isIDByte) else {
            throw .invalidArgument("customer key id '\(id.prefix(80))' must be 1 to 64 letters, digits, '-' or '_'")
        }
        guard secretSHA256.count == 32 else {
            throw .invalidArgument("customer key '\(id)': secretSHA256 must be 64 hex digits (sha256sum of the secret)")
        }
        guard !scopes.isEmpty else {
            throw .invalidArgument("customer key '\(id)' needs at least one scope of \(APIScope.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let rate {
            guard rate.perSecond >= 0.01, rate.perSecond <= 1_000_000, (1...1_000_000).contains(rate.burst) else {
                throw .invalidArgument("customer key '\(id)': requestsPerSecond must be 0.01 to 1000000 and burst 1 to 1000000")
            }
        }
        self.id = id
        self.secretSHA256 = secretSHA256
        self.scopes = scopes
        self.rate = rate
    }

    /// The key in a configuration file: `{"id": …, "secretSHA256": "<64 hex>", "scopes": [...]}`,
    /// optionally with its own `requestsPerSecond` and `burst`.
    /// - Throws: `invalidArgument` naming the field that is missing or wrong.
    public init(configuration entry: Any) throws(ShowroomError) {
        guard let object = entry as? [String: Any] else {
            throw .invalidArgument("each of apiKeys must be an object with id, secretSHA256 and scopes")
        }
        guard let id = object["id"] as? String else { throw .invalidArgument("an apiKeys entry needs an id (a string)") }
        guard let hex = object["secretSHA256"] as? String, let hash = Hex.decode(hex), hash.count == 32 else {
            throw .invalidArgument("customer key '\(id.prefix(80))': secretSHA256 must be 64 hex digits (sha256sum of the secret)")
        }
        guard let names = object["scopes"] as? [String] else {
            throw .invalidArgument("customer key '\(id.prefix(80))': scopes must be a list of \(APIScope.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var scopes: Set<APIScope> = []
        for name in names {
            guard let scope = APIScope(rawValue: name) else {
                throw .invalidArgument("customer key '\(id.prefix(80))': unknown scope '\(name.prefix(40))'; use \(APIScope.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            scopes.insert(scope)
        }
        let unknown = Set(object.keys).subtracting(["id", "secretSHA256", "scopes", "requestsPerSecond", "burst"])
        guard unknown.isEmpty else {
            throw .invalidArgument("customer key '\(id.prefix(80))': unknown field \(unknown.sorted().joined(separator: ", ")); a key has id, secretSHA256, scopes, requestsPerSecond and burst")
        }
        var rate: RequestRate.Limit?
        if object["requestsPerSecond"] != nil || object["burst"] != nil {
            guard let perSecond = (object["requestsPerSecond"] as? NSNumber)?.doubleValue,
                  let burst = (object["burst"] as? NSNumber)?.intValue
            else {
                throw .invalidArgument("customer key '\(id.prefix(80))': give requestsPerSecond and burst together, as numbers")
            }
            rate = RequestRate.Limit(perSecond: perSecond, burst: burst)
        }
        try self.init(id: id, secretSHA256: hash, scopes: scopes, rate: rate)
    }

    /// SHA-256 of `secret`, as configured (`secretSHA256`).
    public static func hash(secret: String) -> [UInt8] { Array(SHA256.hash(data: Array(secret.utf8))) }

    static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}

/// The customer keys a cluster accepts, and the check of a request's `Authorization` header.
public struct CustomerKeys: Sendable {
    private let keys: [String: CustomerKey]
    /// The headers these keys were let in with. Made anew with the keys, so a configuration
    /// that changes a secret or removes a key starts with none of the old ones.
    private let verified = VerifiedHeaders()

    /// The keys; ids must differ.
    /// - Throws: `invalidArgument` for an id given twice.
    public init(_ keys: [CustomerKey]) throws(ShowroomError) {
        var byID: [String: CustomerKey] = [:]
        for key in keys {
            guard byID[key.id] == nil else { throw .invalidArgument("customer key id '\(key.id)' is configured twice") }
            byID[key.id] = key
        }
        self.keys = byID
    }

    /// Whether any key is configured.
    public var isEmpty: Bool { keys.isEmpty }

    /// Why a request was not let in.
    public enum Refusal: Error, Equatable {
        /// No `Authorization`, not Basic, or not `id:secret` in base64.
        case noCredentials
        /// An unknown id or a wrong secret (not told apart, so ids cannot be probed).
        case badCredentials
    }

    /// The key a request's `Authorization` header names, if its secret is right. A header a key
    /// was let in with before is recognised by comparing it whole, in constant time, with the one
    /// kept for its id (``VerifiedHeaders``): the secret is not decoded and hashed again. Any
    /// other header is checked in full, and kept when it lets its key in.
    public func authenticate(authorization: String?) -> Result<CustomerKey, Refusal> {
        guard let authorization, authorization.utf8.count <= 1024 else { return .failure(.noCredentials) }
        // Only verified ids are kept: an unknown id misses as a known one not kept does.
        if let id = Self.basicUserID(authorization), verified.holds(authorization, for: id), let key = keys[id] {
            return .success(key)
        }
        let outcome = check(authorization)
        if case .success(let key) = outcome { verified.keep(authorization, for: key.id) }
        return outcome
    }

    /// The full check of an `Authorization` header of at most 1024 bytes: decoded, the secret
    /// hashed and compared with the key's.
    private func check(_ authorization: String) -> Result<CustomerKey, Refusal> {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8),
              let colon = text.firstIndex(of: ":")
        else { return .failure(.noCredentials) }
        let id = String(text[..<colon])
        let secret = String(text[text.index(after: colon)...])
        let offered = CustomerKey.hash(secret: secret)
        guard let key = keys[id] else {
            // The same work for an unknown id as for a wrong secret.
            _ = Self.equal(offered, offered)
            return .failure(.badCredentials)
        }
        return Self.equal(offered, key.secretSHA256) ? .success(key) : .failure(.badCredentials)
    }

    /// Whether `header` is the one kept for `id` (what the next request with it skips).
    func keeps(_ header: String, for id: String) -> Bool { verified.holds(header, for: id) }

    /// The user name of an HTTP Basic header (`Basic base64(id:secret)`) when it is a possible key
    /// id (1 to 64 of `[A-Za-z0-9_-]`), else nil. It only picks the kept header to compare with:
    /// nothing is let in on what it returns.
    static func basicUserID(_ authorization: String) -> String? {
        let utf8 = authorization.utf8
        let scheme = "basic".utf8
        guard utf8.count > scheme.count, zip(utf8, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let token = utf8.dropFirst(scheme.count)
        guard token.first == UInt8(ascii: " ") else { return nil }
        var id: [UInt8] = []
        id.reserveCapacity(16)
        // Six bits a character; a byte is complete whenever eight or more are pending.
        var bits: UInt32 = 0
        var pending = 0
        for character in token.drop(while: { $0 == UInt8(ascii: " ") }) {
            guard let value = base64Value(character) else { return nil }
            bits = bits << 6 | UInt32(value)
            pending += 6
            guard pending >= 8 else { continue }
            pending -= 8
            let byte = UInt8(truncatingIfNeeded: bits >> UInt32(pending))
            if byte == UInt8(ascii: ":") { return id.isEmpty ? nil : String(decoding: id, as: UTF8.self) }
            guard id.count < 64, CustomerKey.isIDByte(byte) else { return nil }
            id.append(byte)
        }
        return nil
    }

    /// A character's value in standard base64, nil for any other (padding included).
    private static func base64Value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// Compares in time that depends on the length only.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in equal(a, b) } }
    }

    /// Compares in time that depends on the lengths only.
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// The `Authorization` header each key id was last let in with, so that a business server sending
/// the same header on every request costs one comparison instead of a base64 decoding and a hash.
/// Holds at most one header per configured key (a newer one replaces it), and at most
/// ``capacity`` in all. Shared by the server's event loops.
final class VerifiedHeaders: Sendable {
    /// The most headers kept: past it, a newly verified header is not kept (it is checked in
    /// full each time, as without the cache).
    static let capacity = 4096

    private let byID = Mutex<[String: [UInt8]]>([:])

    /// Whether `header` is, byte for byte, the one kept for `id`. The comparison takes time that
    /// depends on the lengths only, so a wrong secret of the right length learns nothing of the
    /// kept one.
    func holds(_ header: String, for id: String) -> Bool {
        var header = header
        return header.withUTF8 { offered in
            byID.withLock { kept in
                guard let verified = kept[id] else { return false }
                return verified.withUnsafeBufferPointer { CustomerKeys.equal(UnsafeRawBufferPointer(offered), UnsafeRawBufferPointer($0)) }
            }
        }
    }

    /// How many headers are kept.
    var count: Int { byID.withLock { $0.count } }

    /// Keeps `header`, which just let `id` in.
    func keep(_ header: String, for id: String) {
        byID.withLock { kept in
            guard kept[id] != nil || kept.count < Self.capacity else { return }
            kept[id] = Array(header.utf8)
        }
    }
}
