/// The app credentials of the local demo cluster: `deploy/cluster.sh` gives them to its processes
/// unless told others, and showroomctl mints tokens with them by default. For this machine only:
/// a real deployment sets its own in each process's configuration file.
public enum DemoApp {
    /// The demo app's id.
    public static let appID = "5f0c5d7e5c1a4f3e9b2d8a6c4e1f0a7b"
    /// The demo app's certificate.
    public static let appCertificate = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"
}
