import Foundation

/// A self-signed certificate for `localhost` and 127.0.0.1, as a test deployment would make one
/// with openssl: PEM files in a directory of their own, removed by ``remove()``.
public struct SelfSignedCertificate: Sendable {
    /// The certificate's PEM file.
    public let certificate: String
    /// Its private key's PEM file.
    public let key: String
    private let directory: URL

    /// Makes the certificate and key with `/usr/bin/openssl`.
    /// - Throws: When openssl cannot run or fails.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificate = directory.appendingPathComponent("cert.pem").path
        key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else {
            remove()
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "openssl could not make a certificate (status \(openssl.terminationStatus))"])
        }
    }

    /// Removes the files.
    public func remove() { try? FileManager.default.removeItem(at: directory) }
}
