import Calls
import Metrics

/// The call-signal node's counters and the set-up time histogram (Prometheus on the admin port).
enum CallMetrics {
    /// Calls rung (busy ones included).
    static let rung = Counter(label: "callsignal.calls_rung")
    /// Calls that connected.
    static let connected = Counter(label: "callsignal.calls_connected")
    /// From the call to connected on both sides.
    static let setup = Metrics.Timer(label: "callsignal.call_setup")

    /// The sizes of what the node keeps, so that a long run shows whether anything grows with
    /// every user or call ever seen.
    static let sessions = Gauge(label: "callsignal.sessions")
    static let calls = Gauge(label: "callsignal.calls")
    static let usersInCalls = Gauge(label: "callsignal.users_in_calls")
    static let userRecords = Gauge(label: "callsignal.user_records")
    static let tombstones = Gauge(label: "callsignal.user_record_tombstones")
    static let mailboxes = Gauge(label: "callsignal.mailboxes")
    static let callsWithTokens = Gauge(label: "callsignal.calls_with_tokens")
    static let dialLimitedUsers = Gauge(label: "callsignal.dial_limited_users")

    /// Refreshes the size gauges.
    static func recordSizes(of machine: CallSignalShell.Machine) {
        sessions.record(machine.presence.sessions.count)
        calls.record(machine.book.calls.count)
        usersInCalls.record(machine.callOf.count)
        userRecords.record(machine.records.entries.count)
        tombstones.record(machine.records.tombstoneCount)
        mailboxes.record(machine.mailboxes.count)
        callsWithTokens.record(machine.mintedTokens.count)
        dialLimitedUsers.record(machine.dials.trackedUsers)
    }
}
