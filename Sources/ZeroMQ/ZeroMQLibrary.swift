import CZeroMQ

/// Facts about the libzmq this process is linked against, and the start-up check that refuses a
/// library lacking what Showroom uses.
public enum ZeroMQLibrary {
    /// The linked libzmq version as (major, minor, patch).
    public static var version: (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }

    /// The version as text, e.g. `"4.3.4"`.
    public static var versionString: String {
        let v = version
        return "\(v.major).\(v.minor).\(v.patch)"
    }

    /// Whether libzmq was built with a capability (`"ipc"`, `"curve"`, `"draft"` ...).
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }

    /// The oldest libzmq the wrapper supports: socket heartbeats, `ROUTER_HANDOVER` and
    /// `ZMQ_BLOCKY` all exist from 4.2; 4.3 is what Debian ships and what is tested.
    public static let minimumVersion = (major: 4, minor: 3)

    /// Capabilities the cluster uses: `ipc` for same-host transports.
    public static let requiredCapabilities = ["ipc"]

    /// Throws a clear error if the linked libzmq is too old or lacks a required capability.
    /// Every process calls this at start-up.
    public static func requireSupported() throws(ZeroMQError) {
        let v = version
        if (v.major, v.minor) < (minimumVersion.major, minimumVersion.minor) {
            throw ZeroMQError(
                errno: 0, operation: "libzmq check",
                message: "libzmq \(versionString) is too old: Showroom needs \(minimumVersion.major).\(minimumVersion.minor) or newer (Debian: apt-get install libzmq3-dev)")
        }
        for capability in requiredCapabilities where !has(capability) {
            throw ZeroMQError(
                errno: 0, operation: "libzmq check",
                message: "libzmq \(versionString) was built without '\(capability)', which Showroom needs")
        }
    }
}
