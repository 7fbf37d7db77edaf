import Foundation
import ShowroomWire
import ZeroMQ

/// Who may speak on cluster links: the cluster's CURVE keys, read from one directory.
///
/// The directory holds
/// - `cluster.key`: the secret key every member's cluster endpoint serves with (the same on every
///   member, so a peer reaches any cluster endpoint, seeds included, knowing only its public
///   half);
/// - `<member-id>.pub`: one public key per member (and per operator tool), the list of who is
///   admitted. A connection whose key is not listed is refused during the handshake (the ZAP
///   handler), so it can neither gossip nor send any internal message kind; messages from an
///   admitted one carry the member id as their `User-Id`;
/// - `<member-id>.key`: the member's own secret key, needed only on that member's host.
///
/// Keys are Z85 text (40 characters) on the file's first line. Removing a member's `.pub` from
/// every host (and restarting them) revokes it; replacing `cluster.key` everywhere rotates the
/// shared server key. `showroomctl keys generate` writes such a directory.
public struct ClusterKeyring: Sendable {
    /// The shared server key pair of every cluster endpoint.
    public let server: CurveKeyPair
    /// The admitted members' public keys by member id.
    public let members: [String: String]
    /// This process's id and key pair.
    public let ownID: String
    public let own: CurveKeyPair
    private let idsByKey: [[UInt8]: String]

    /// The ZAP domain of cluster endpoints.
    public static let clusterDomain = "cluster"
    /// The file of the shared server key.
    public static let serverKeyFile = "cluster.key"

    /// Reads the keyring in `directory` for the member `id`.
    ///
    /// - Throws: ``ShowroomError`` (`invalidArgument`) naming the missing or malformed file.
    public static func load(directory: String, id: String) throws(ShowroomError) -> ClusterKeyring {
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        let server = try keyPair(at: folder.appendingPathComponent(serverKeyFile))
        let own = try keyPair(at: folder.appendingPathComponent("\(id).key"))
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .invalidArgument("cannot read the keyring directory \(directory): \(error.localizedDescription)")
        }
        var members: [String: String] = [:]
        for name in names where name.hasSuffix(".pub") {
            let member = String(name.dropLast(4))
            members[member] = try publicKey(at: folder.appendingPathComponent(name))
        }
        guard members[id] == own.publicKey else {
            throw .invalidArgument(
                "keyring \(directory): \(id).pub is missing or does not match \(id).key; regenerate the member's keys")
        }
        return ClusterKeyring(server: server, members: members, ownID: id, own: own)
    }

    /// A keyring from keys in memory (tests).
    public init(server: CurveKeyPair, members: [String: String], ownID: String, own: CurveKeyPair) {
        self.server = server
        self.members = members
        self.ownID = ownID
        self.own = own
        var ids: [[UInt8]: String] = [:]
        for (id, key) in members {
            if let raw = CurveKey.decode(key) { ids[raw] = id }
        }
        idsByKey = ids
    }

    /// The member a handshake's CURVE client key belongs to, or nil when it is not listed.
    public func member(withKey raw: [UInt8]) -> String? {
        idsByKey[raw]
    }

    /// Whether `id` is an admitted member.
    public func admits(_ id: String) -> Bool {
        members[id] != nil
    }

    /// Writes a keyring for `ids` into `directory` (created if missing): `cluster.key` unless it
    /// exists, and for each id without keys yet `<id>.key` (mode 600) and `<id>.pub`. Existing
    /// keys are kept, so adding a member later does not revoke the others.
    ///
    /// - Returns: The ids whose keys were made now.
    @discardableResult
    public static func generate(directory: String, ids: [String]) throws(ShowroomError) -> [String] {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        } catch {
            throw .invalidArgument("cannot create the keyring directory \(directory): \(error.localizedDescription)")
        }
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        func write(_ text: String, to name: String, secret: Bool) throws(ShowroomError) {
            let path = folder.appendingPathComponent(name).path
            guard manager.createFile(atPath: path, contents: Data((text + "\n").utf8),
                                     attributes: [.posixPermissions: secret ? 0o600 : 0o644]) else {
                throw .invalidArgument("cannot write \(path)")
            }
        }
        func newPair() throws(ShowroomError) -> CurveKeyPair {
            do { return try CurveKeyPair.generate() } catch {
                throw .internal("libzmq cannot make CURVE keys: \(error)")
            }
        }
        if !manager.fileExists(atPath: folder.appendingPathComponent(serverKeyFile).path) {
            try write(try newPair().secretKey, to: serverKeyFile, secret: true)
        }
        var made: [String] = []
        for id in ids {
            guard isValidID(id) else {
                throw .invalidArgument("'\(id)' cannot name a key: use 1-64 letters, digits, '-', '_' or '.'")
            }
            guard !manager.fileExists(atPath: folder.appendingPathComponent("\(id).key").path) else { continue }
            let pair = try newPair()
            try write(pair.secretKey, to: "\(id).key", secret: true)
            try write(pair.publicKey, to: "\(id).pub", secret: false)
            made.append(id)
        }
        return made
    }

    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && !id.hasPrefix(".")
            && id.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
    }

    private static func firstLine(at url: URL) throws(ShowroomError) -> String {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw .invalidArgument("cannot read key file \(url.path): \(error.localizedDescription)")
        }
        return text.split(whereSeparator: \.isNewline).first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
    }

    private static func keyPair(at url: URL) throws(ShowroomError) -> CurveKeyPair {
        let secret = try firstLine(at: url)
        do {
            return try CurveKeyPair(secretKey: secret)
        } catch {
            throw .invalidArgument("key file \(url.path) does not hold a CURVE secret key (40 Z85 characters)")
        }
    }

    private static func publicKey(at url: URL) throws(ShowroomError) -> String {
        let key = try firstLine(at: url)
        guard CurveKey.isValid(key) else {
            throw .invalidArgument("key file \(url.path) does not hold a CURVE public key (40 Z85 characters)")
        }
        return key
    }
}

/// What a process needs to open links to cluster endpoints: its own key pair and the cluster's
/// server public key. Nil credentials mean plain links (a cluster without a keyring).
public struct ClusterCredentials: Sendable {
    /// This process's key pair.
    public var own: CurveKeyPair
    /// The public key every cluster endpoint serves with.
    public var serverPublicKey: String

    /// Credentials from explicit keys.
    public init(own: CurveKeyPair, serverPublicKey: String) {
        self.own = own
        self.serverPublicKey = serverPublicKey
    }

    /// This member's credentials in `keyring`.
    public init(_ keyring: ClusterKeyring) {
        self.init(own: keyring.own, serverPublicKey: keyring.server.publicKey)
    }

    /// Sets `socket` up as a CURVE client of a cluster endpoint; call before connecting.
    public func apply(to socket: Socket) throws(ZeroMQError) {
        try socket.makeCurveClient(own, serverPublicKey: serverPublicKey)
    }
}

/// A member's keyring kept current: re-read from its directory when a key or id is not found and
/// the directory changed since it was read (a member added by dropping its `.pub` into every
/// host's directory is admitted without restarts, and an unknown key costs a `stat`, not a
/// re-read), and every ``refreshInterval`` (so a removed one is revoked). Loop-confined.
final class KeyringCache {
    private(set) var keyring: ClusterKeyring
    private let directory: String?
    private let clock: () -> ContinuousClock.Instant
    private var loadedAt: ContinuousClock.Instant
    private var loadedVersion: Date?
    /// The longest a revoked key stays admitted.
    static let refreshInterval = Duration.seconds(10)

    init(_ keyring: ClusterKeyring, directory: String?, clock: @escaping () -> ContinuousClock.Instant = { .now }) {
        self.keyring = keyring
        self.directory = directory
        self.clock = clock
        loadedAt = clock()
        loadedVersion = Self.version(of: directory)
    }

    /// The member a CURVE key belongs to.
    func member(withKey raw: [UInt8]) -> String? {
        refreshIfStale()
        if let id = keyring.member(withKey: raw) { return id }
        return reloadIfChanged() ? keyring.member(withKey: raw) : nil
    }

    /// Whether `id` is listed.
    func admits(_ id: String) -> Bool {
        refreshIfStale()
        if keyring.admits(id) { return true }
        return reloadIfChanged() && keyring.admits(id)
    }

    /// The ZAP decision for a handshake: cluster endpoints admit listed CURVE keys only (under the
    /// member's id); every other socket of the process (client endpoints) admits anybody.
    func authorize(_ request: ZAPRequest) -> String? {
        guard request.domain == ClusterKeyring.clusterDomain else { return "" }
        guard request.mechanism == "CURVE" else { return nil }
        return member(withKey: request.clientKey)
    }

    private func refreshIfStale() {
        if loadedAt.duration(to: clock()) >= Self.refreshInterval { reload() }
    }

    private func reloadIfChanged() -> Bool {
        guard let directory, Self.version(of: directory) != loadedVersion else { return false }
        reload()
        return true
    }

    private func reload() {
        loadedAt = clock()
        loadedVersion = Self.version(of: directory)
        guard let directory, let fresh = try? ClusterKeyring.load(directory: directory, id: keyring.ownID) else { return }
        keyring = fresh
    }

    /// The directory's modification time: a file added, removed or renamed in it changes it.
    private static func version(of directory: String?) -> Date? {
        guard let directory else { return nil }
        return (try? FileManager.default.attributesOfItem(atPath: directory))?[.modificationDate] as? Date
    }
}

extension ClusterCredentials {
    /// The credentials of `id` (an operator tool's or a member's) in the keyring at `directory`.
    ///
    /// - Throws: ``ShowroomError`` (`invalidArgument`) when the keyring or the id's keys are
    ///   missing or malformed.
    public static func load(keyringDirectory directory: String, id: String) throws(ShowroomError) -> ClusterCredentials {
        ClusterCredentials(try ClusterKeyring.load(directory: directory, id: id))
    }
}
