import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A CURVE key pair (Curve25519), both keys in Z85 text: 40 characters each.
///
/// A server socket holds its secret key; a client holds its own pair and the server's public key.
/// Keys are made with libzmq's `zmq_curve_keypair`, so they are what any ZeroMQ peer expects.
public struct CurveKeyPair: Sendable, Hashable {
    /// The public key, Z85 (40 characters).
    public let publicKey: String
    /// The secret key, Z85 (40 characters). Keep it out of logs and world-readable files.
    public let secretKey: String

    /// A new random key pair.
    ///
    /// - Throws: ``ZeroMQError`` when libzmq was built without CURVE.
    public static func generate() throws(ZeroMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else { throw ZeroMQError.last("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: Self.string(publicKey), secretKey: Self.string(secretKey))
    }

    /// The pair whose secret key is `secretKey` (the public key is derived from it).
    ///
    /// - Throws: ``ZeroMQError`` (`EINVAL`) when `secretKey` is not a Z85 key.
    public init(secretKey: String) throws(ZeroMQError) {
        guard CurveKey.isValid(secretKey) else {
            throw ZeroMQError(errno: EINVAL, operation: "CURVE key", message: "a CURVE secret key must be 40 Z85 characters")
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        let rc = secretKey.withCString { zmq_curve_public(&publicKey, $0) }
        guard rc == 0 else { throw ZeroMQError.last("zmq_curve_public") }
        self.init(publicKey: Self.string(publicKey), secretKey: secretKey)
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    private static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Z85 key helpers.
public enum CurveKey {
    /// The Z85 alphabet (ZeroMQ RFC 32).
    private static let alphabet = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// True when `text` is a Z85-encoded 32-byte key: 40 characters of the Z85 alphabet.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 40 && bytes.allSatisfy { alphabet.contains($0) }
    }

    /// The 32 raw bytes of a Z85 key, or nil when it is not one.
    public static func decode(_ text: String) -> [UInt8]? {
        guard isValid(text) else { return nil }
        var raw = [UInt8](repeating: 0, count: 32)
        let ok = text.withCString { zmq_z85_decode(&raw, $0) } != nil
        return ok ? raw : nil
    }

    /// The Z85 text of 32 raw key bytes, or nil for another length.
    public static func encode(_ raw: [UInt8]) -> String? {
        guard raw.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        guard zmq_z85_encode(&text, raw, 32) != nil else { return nil }
        return String(decoding: text.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Socket {
    /// Makes this socket a CURVE server: peers must handshake with CURVE and know `keyPair`'s
    /// public key. Set before binding.
    ///
    /// - Parameters:
    ///   - keyPair: The server's key pair (only the secret key is used).
    ///   - zapDomain: The domain the context's ZAP handler sees for this socket's peers, so one
    ///     handler can tell a cluster socket from a client socket.
    public func makeCurveServer(_ keyPair: CurveKeyPair, zapDomain: String) throws(ZeroMQError) {
        try set(.curveServer, 1)
        try set(.curveSecretKey, text: keyPair.secretKey)
        try set(.zapDomain, text: zapDomain)
    }

    /// Makes this socket a CURVE client of a server whose public key is `serverPublicKey`,
    /// authenticating with `keyPair`. Set before connecting.
    public func makeCurveClient(_ keyPair: CurveKeyPair, serverPublicKey: String) throws(ZeroMQError) {
        try set(.curveServerKey, text: serverPublicKey)
        try set(.curvePublicKey, text: keyPair.publicKey)
        try set(.curveSecretKey, text: keyPair.secretKey)
    }

    /// Sets a text option (Z85 keys, the ZAP domain).
    public func set(_ option: SocketOption, text: String) throws(ZeroMQError) {
        try set(option, bytes: Array(text.utf8))
    }
}

extension Multipart {
    /// A metadata property of received frame `index` (`"User-Id"`: the id the ZAP handler gave the
    /// authenticated peer; `"Peer-Address"`: its IP address), or nil if the frame has none.
    public func property(_ name: String, of index: Int) -> String? {
        let message = frame(index)
        guard let value = name.withCString({ zmq_msg_gets(message, $0) }) else { return nil }
        return String(cString: value)
    }
}
