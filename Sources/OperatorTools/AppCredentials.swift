import ArgumentParser
import Foundation
import ShowroomAuth

/// The app credentials the operator's tools (showroomctl's client and admin commands, the
/// benchmarks) mint tokens and sign requests with: from
/// `--app-id` / `--app-cert`, `SHOWROOM_APP_ID` / `SHOWROOM_APP_CERTIFICATE`, or the `app.json`
/// of a local cluster's run directory (`--run-dir` or `SHOWROOM_RUN_DIR`; `deploy/cluster.sh` sets
/// it for the commands it runs). No default: a missing one is an error saying how to pass it.
public struct AppCredentials: ParsableArguments {
    @Option(name: .customLong("app-id"), help: "The app id (32 hex digits); default: $SHOWROOM_APP_ID, or the run directory's.")
    public var appIDFlag: String?

    @Option(name: .customLong("app-cert"), help: "The app certificate (32 hex digits); default: $SHOWROOM_APP_CERTIFICATE, or the run directory's.")
    public var appCertificateFlag: String?

    @Option(name: .customLong("run-dir"), help: "A local cluster's run directory (deploy/cluster.sh), whose app.json holds the credentials; default: $SHOWROOM_RUN_DIR.")
    public var runDirectory: String?

    public init() {}

    /// The credentials, found as the type's documentation says.
    public func resolved() throws -> LocalAppCredentials {
        do {
            return try LocalAppCredentials.find(appID: appIDFlag, appCertificate: appCertificateFlag, runDirectory: runDirectory)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The app certificate, for signing admin requests.
    public func certificate() throws -> String { try resolved().appCertificate }

    /// A token for `uid` in `channel`: every privilege for a publisher, join only for a subscriber.
    public func token(channel: String, uid: UInt32, role: RTCRole, expire: UInt32 = 3600) throws -> String {
        try resolved().token(channel: channel, uid: uid, role: role, expire: expire)
    }
}
