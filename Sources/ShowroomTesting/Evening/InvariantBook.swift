import Synchronization

/// The invariants an evening checks, each with its count of checks and its violations; a violation
/// names the seed and the step it followed, so the same seed replays the same schedule up to it.
public final class InvariantBook: Sendable {
    /// One broken rule.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        public var invariant: String
        public var seed: UInt64
        /// The step whose effects were being checked (or the last step started), if any.
        public var step: String
        public var message: String

        public var description: String { "\(invariant) violated (seed \(seed), after step \(step)): \(message)" }
    }

    /// What an evening checks, by name (the JSON keys of the figures).
    public enum Invariant: String, Sendable, CaseIterable {
        /// Every viewer of a live room whose host is not in a call decodes that host; after a step
        /// that touched the room ends, its picture gap is ≤ 1 s (≤ 2 s after a SIGKILL).
        case showPlays = "show_plays"
        /// A PK peer is seen only during the PK, a co-host only while seated, a host in a call not
        /// by its audience.
        case rightPeopleSeen = "right_people_seen"
        /// The status view lists each live channel once, on the edge its host and viewers use.
        case statusAgrees = "status_agrees"
        /// Each channel's events are numbered without gaps or repeats in each series; each notice id delivered
        /// once (after de-duplication, as a business server does).
        case eventsNumbered = "events_numbered"
        /// When everything has ended, the cluster's gauges are back at their baseline.
        case backToBaseline = "back_to_baseline"
        /// Each step does what it says (a call accepted connects, a seat puts the viewer on stage…).
        case stepsDoWhatTheySay = "steps_do_what_they_say"
    }

    private struct Counts: Sendable {
        var checks: [Invariant: Int] = [:]
        var violations: [Violation] = []
        var violationsByInvariant: [Invariant: Int] = [:]
    }

    public let seed: UInt64
    /// Violations kept in full per invariant (the count goes on past it).
    public let keptViolations: Int
    private let counts = Mutex(Counts())

    public init(seed: UInt64, keptViolations: Int = 20) {
        self.seed = seed
        self.keptViolations = keptViolations
    }

    /// Counts one check of `invariant`, a violation if `holds` is false.
    public func check(_ invariant: Invariant, _ holds: Bool, step: @autoclosure () -> String, _ message: @autoclosure () -> String) {
        let violation = holds ? nil : Violation(invariant: invariant.rawValue, seed: seed, step: step(), message: message())
        counts.withLock { counts in
            counts.checks[invariant, default: 0] += 1
            guard let violation else { return }
            counts.violationsByInvariant[invariant, default: 0] += 1
            if counts.violationsByInvariant[invariant]! <= keptViolations { counts.violations.append(violation) }
        }
    }

    public func checks(_ invariant: Invariant) -> Int { counts.withLock { $0.checks[invariant] ?? 0 } }
    public func violationCount(_ invariant: Invariant) -> Int { counts.withLock { $0.violationsByInvariant[invariant] ?? 0 } }
    public var violationTotal: Int { counts.withLock { $0.violationsByInvariant.values.reduce(0, +) } }
    public var violations: [Violation] { counts.withLock { $0.violations } }

    /// One line per invariant: name, checks, violations.
    public var summary: [String] {
        Invariant.allCases.map { "\($0.rawValue): \(checks($0)) checks, \(violationCount($0)) violations" }
    }
}
