/// The version of this Showroom build, reported by every process.
public enum ShowroomVersion {
    /// Semantic version of the software.
    public static let current = "0.1.0"
}
