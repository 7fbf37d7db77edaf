import Crypto
import ShowroomWire

/// Signs and checks administrator requests (closing a room, kicking a user) with the app
/// certificate, as `proto/showroom/room/rooms.proto` describes: lowercase hex of
/// HMAC-SHA256(key: the certificate's ASCII characters, message: "<action>|<target>|<uid>|<issuedAtMs>").
public enum AdminSigner {
    /// How far a signature's issue time may be from now, either way: 5 minutes.
    public static let maxClockSkewMs: Int64 = 5 * 60_000

    /// Signs an admin request.
    ///
    /// - Parameters:
    ///   - action: "close-room" or "kick".
    ///   - target: The room id (close-room) or channel (kick).
    ///   - uid: The uid acted on (0 for close-room).
    ///   - issuedAtMs: The time of signing, ms since the Unix epoch.
    ///   - appCertificate: The app certificate.
    /// - Returns: The signature to put in the request.
    public static func sign(action: String, target: String, uid: UInt32, issuedAtMs: Int64, appCertificate: String) -> RoomAdminSignature {
        let code = HMAC<SHA256>.authenticationCode(
            for: Array(message(action: action, target: target, uid: uid, issuedAtMs: issuedAtMs).utf8),
            using: SymmetricKey(data: Array(appCertificate.utf8)))
        var signature = RoomAdminSignature()
        signature.issuedAtMs = issuedAtMs
        signature.signature = Hex.encode(code)
        return signature
    }

    /// Checks an admin request's signature.
    ///
    /// - Parameters:
    ///   - signature: The request's signature.
    ///   - action: The action the request asks for.
    ///   - target: The room id or channel the request names.
    ///   - uid: The uid the request names (0 for close-room).
    ///   - nowMs: The time now.
    ///   - appCertificate: The cluster's app certificate.
    /// - Throws: `ADMIN_UNAUTHORIZED` when the signature is missing, does not match (another
    ///   certificate, or the request was altered), or was issued more than 5 minutes from now.
    public static func verify(
        _ signature: RoomAdminSignature, action: String, target: String, uid: UInt32, nowMs: Int64, appCertificate: String
    ) throws(ShowroomError) {
        guard signature.issuedAtMs != 0, !signature.signature.isEmpty else {
            throw ShowroomError(.adminUnauthorized,
                "the \(action) request is not signed; sign it with the app certificate (issued_at_ms and signature)")
        }
        guard !appCertificate.isEmpty else {
            throw ShowroomError(.adminUnauthorized,
                "this cluster has no app certificate configured, so it accepts no \(action) request; configure one")
        }
        let content = Array(message(action: action, target: target, uid: uid, issuedAtMs: signature.issuedAtMs).utf8)
        guard let code = Hex.decode(signature.signature),
              HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: content, using: SymmetricKey(data: Array(appCertificate.utf8)))
        else {
            throw ShowroomError(.adminUnauthorized,
                "the \(action) request's signature does not match: sign \"\(action)|\(target)|\(uid)|<issued_at_ms>\" with this cluster's app certificate")
        }
        let skew = nowMs > signature.issuedAtMs ? nowMs - signature.issuedAtMs : signature.issuedAtMs - nowMs
        guard skew <= maxClockSkewMs else {
            throw ShowroomError(.adminUnauthorized,
                "the \(action) request was signed \(skew / 1000) s \(nowMs > signature.issuedAtMs ? "ago" : "ahead of this coordinator's clock"); signatures are accepted within \(maxClockSkewMs / 60_000) minutes, sign it again now")
        }
    }

    private static func message(action: String, target: String, uid: UInt32, issuedAtMs: Int64) -> String {
        "\(action)|\(target)|\(uid)|\(issuedAtMs)"
    }
}
