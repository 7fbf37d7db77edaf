import ArgumentParser
import Foundation
import LocalCluster
import ShowroomAuth

/// The app credentials the client and benchmark commands mint their tokens with; the local demo
/// cluster's by default (`deploy/cluster.sh` starts its edges with the same).
struct AppCredentials: ParsableArguments {
    @Option(name: .customLong("app-id"), help: "The app id (32 hex digits); default: the local demo cluster's.")
    var appID: String = DemoApp.appID

    @Option(name: .customLong("app-cert"), help: "The app certificate (32 hex digits); default: the local demo cluster's.")
    var appCertificate: String = DemoApp.appCertificate

    /// A token for `uid` in `channel`: every privilege for a publisher, join only for a subscriber.
    func token(channel: String, uid: UInt32, role: RTCRole, expire: UInt32 = 3600) throws -> String {
        try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: appCertificate, channelName: channel, uid: uid, role: role, tokenExpire: expire)
    }
}
