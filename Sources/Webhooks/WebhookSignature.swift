import Crypto

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
        return hex(code)
    }

    /// Whether `signature` (hex, either case) is the signature of `body` under `secret`. The
    /// comparison takes the same time wherever the first differing byte is.
    public static func verify(body: some Sequence<UInt8>, secret: String, signature: String) -> Bool {
        guard let code = bytes(hex: signature), code.count == SHA256.byteCount else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Array(body), using: key(secret))
    }

    private static func key(_ secret: String) -> SymmetricKey {
        SymmetricKey(data: Array(secret.utf8))
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text = [UInt8]()
        text.reserveCapacity(2 * SHA256.byteCount)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(hex text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
