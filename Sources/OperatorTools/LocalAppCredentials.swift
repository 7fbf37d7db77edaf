import Foundation
import ShowroomAuth
import ShowroomWire

/// The app id and certificate an operator's tool (showroomctl, showroom-bench) mints tokens and
/// signs admin requests with, and where it finds them: each from its flag, else from the
/// environment (`SHOWROOM_APP_ID`, `SHOWROOM_APP_CERTIFICATE`), else from the `app.json` that
/// `deploy/cluster.sh up` writes into its run directory (named by a `--run-dir` flag or
/// `SHOWROOM_RUN_DIR`). There is no built-in default: a tool pointed at a real deployment must
/// never mint tokens with a well-known certificate by accident.
public struct LocalAppCredentials: Sendable, Equatable {
    /// The app id (32 hex digits).
    public var appID: String
    /// The app certificate (32 hex digits).
    public var appCertificate: String

    /// The environment variable naming the app id.
    public static let appIDVariable = "SHOWROOM_APP_ID"
    /// The environment variable naming the app certificate.
    public static let appCertificateVariable = "SHOWROOM_APP_CERTIFICATE"
    /// The environment variable naming a local cluster's run directory.
    public static let runDirectoryVariable = "SHOWROOM_RUN_DIR"

    /// Finds the credentials; throws `invalidArgument` saying how to pass what is missing.
    ///
    /// - Parameters:
    ///   - appID: The `--app-id` flag, if given.
    ///   - appCertificate: The `--app-cert` flag, if given.
    ///   - runDirectory: The `--run-dir` flag, if given.
    ///   - environment: The process environment.
    public static func find(appID: String?, appCertificate: String?, runDirectory: String?,
                            environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ShowroomError) -> LocalAppCredentials {
        let directory = runDirectory ?? environment[runDirectoryVariable].flatMap { $0.isEmpty ? nil : $0 }
        var fromFile: [String: Any] = [:]
        if let directory, (appID == nil && environment[appIDVariable] == nil) || (appCertificate == nil && environment[appCertificateVariable] == nil) {
            let file = URL(fileURLWithPath: directory).appendingPathComponent("app.json")
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw .invalidArgument("no readable \(file.path): is \(directory) a run directory of deploy/cluster.sh up?")
            }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw .invalidArgument("\(file.path) is not a JSON object with appID and appCertificate")
            }
            fromFile = object
        }
        func value(_ flag: String?, _ variable: String, _ key: String, _ name: String) throws(ShowroomError) -> String {
            if let flag, !flag.isEmpty { return flag }
            if let set = environment[variable], !set.isEmpty { return set }
            if let stored = fromFile[key] as? String, !stored.isEmpty { return stored }
            throw .invalidArgument(
                "no \(name): pass \(name == "app id" ? "--app-id" : "--app-cert"), set \(variable), or point --run-dir "
                    + "(or \(runDirectoryVariable)) at a local cluster's run directory, whose app.json deploy/cluster.sh up wrote")
        }
        return LocalAppCredentials(
            appID: try value(appID, appIDVariable, "appID", "app id"),
            appCertificate: try value(appCertificate, appCertificateVariable, "appCertificate", "app certificate"))
    }

    /// Creates credentials from known values.
    public init(appID: String, appCertificate: String) {
        self.appID = appID
        self.appCertificate = appCertificate
    }

    /// A token for `uid` in `channel`: every privilege for a publisher, join only for a subscriber.
    public func token(channel: String, uid: UInt32, role: RTCRole, expire: UInt32 = 3600) throws -> String {
        try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: appCertificate, channelName: channel, uid: uid, role: role, tokenExpire: expire)
    }

    /// A signaling login token (RTM service) for `uid`, valid for `expire` seconds.
    public func loginToken(uid: UInt32, expire: UInt32 = 3600) throws -> String {
        try RTMTokenBuilder.buildToken(appID: appID, appCertificate: appCertificate, userID: "\(uid)", expire: expire)
    }
}
