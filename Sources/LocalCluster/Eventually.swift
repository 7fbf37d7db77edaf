import ShowroomWire

/// Waits until `condition` holds, checking it every 10 ms until `timeout`. A condition that throws
/// counts as not yet (a member still restarting, a request refused while the cluster settles);
/// the last error is named when the time is up.
public func eventually(_ what: String, timeout: Duration = .seconds(15),
                       _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    var lastError: (any Error)?
    while ContinuousClock.now < deadline {
        do {
            if try await condition() { return }
        } catch {
            lastError = error
        }
        try await Task.sleep(for: .milliseconds(10))  // poll period
    }
    throw ShowroomError.deadlineExceeded("\(what) did not happen within \(timeout)\(lastError.map { "; last error: \($0)" } ?? "")")
}
