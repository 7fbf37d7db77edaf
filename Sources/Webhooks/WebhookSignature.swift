import Crypto
import ShowroomWire

/// How a receiver knows a webhook came from this cluster: the body's HMAC-SHA256 under the
/// shared secret, as lowercase hex in the ``header`` of every post.
///
/// ```swift
/// let signature = request.headers[WebhookSignature.header] ?? ""
/// guard WebhookSignature.verify(body: body, secret: secret, signature: signature) else { return 401 }
/// ```
public enum WebhookSignature {
    /// The header holding the signature: lowercase hex HMAC-SHA256(secret, body bytes).
    public static let header = "Showroom-Signature-V2"
    /// The header holding the event's notice id; receivers de-duplicate on it.
    public static let noticeHeader = "Showroom-Notice-Id"

    /// The signature of `body` under `secret`: 64 lowercase hex digits.
    public static func sign(body: some Sequence<UInt8>, secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(body), using: key(secret))
        return Hex.encode(code)
    }

    /// Whether `signature` (hex, either case) is the signature of `body` under `secret`. The
    /// comparison takes the same time wherever the first differing byte is.
    public static func verify(body: some Sequence<UInt8>, secret: String, signature: String) -> Bool {
        guard let code = Hex.decode(signature), code.count == SHA256.byteCount else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Array(body), using: key(secret))
    }

    private static func key(_ secret: String) -> SymmetricKey {
        SymmetricKey(data: Array(secret.utf8))
    }
}
