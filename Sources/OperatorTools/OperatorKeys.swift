import Foundation
import NodeRuntime

/// The keys the operator's tools present on cluster endpoints of a cluster with a keyring: the
/// `operator` key pair (or `SHOWROOM_KEY_ID`'s) of the keyring directory named by
/// `SHOWROOM_KEYRING`. `deploy/cluster.sh` sets both for the commands it runs. Unset: plain links
/// (a cluster without a keyring, or a client endpoint).
public enum OperatorKeys {
    /// The credentials, or nil without `SHOWROOM_KEYRING`; exits with a clear message when the
    /// keyring named there cannot be read.
    public static let credentials: ClusterCredentials? = {
        let environment = ProcessInfo.processInfo.environment
        guard let directory = environment["SHOWROOM_KEYRING"], !directory.isEmpty else { return nil }
        do {
            return try ClusterCredentials.load(keyringDirectory: directory, id: environment["SHOWROOM_KEY_ID"] ?? "operator")
        } catch {
            FileHandle.standardError.write(Data("\(ProcessInfo.processInfo.processName): SHOWROOM_KEYRING: \(error)\n".utf8))
            exit(2)
        }
    }()
}

/// Runs blocking socket work on a thread of its own, off Swift's cooperative pool.
public func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
