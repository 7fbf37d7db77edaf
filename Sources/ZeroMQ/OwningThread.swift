#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread that owns a thread-confined object, checked on every use.
///
/// libzmq sockets are not thread-safe; using one from two threads corrupts it silently. Making
/// ownership explicit turns that into an immediate, explained crash at the offending call.
struct OwningThread {
    private let owner: pthread_t
    private let what: StaticString

    /// Records the calling thread as owner.
    init(_ what: StaticString) {
        self.owner = pthread_self()
        self.what = what
    }

    /// True when called on the owning thread.
    var isCurrent: Bool { pthread_equal(owner, pthread_self()) != 0 }

    /// Stops the process if called from any thread but the owner.
    @inline(__always)
    func check(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isCurrent, "\(what) used off its owning thread", file: file, line: line)
    }
}
