import AdminEndpoint
import Foundation

/// CPU time used by processes and threads (Linux /proc): what the fan-out benchmark divides by
/// the bytes delivered.
enum CPUTime {
    /// User + system seconds used so far by process `pid`, or `nil` if it cannot be read.
    static func process(_ pid: Int32) -> Double? {
        ProcFS.cpuSeconds(statAt: "/proc/\(pid)/stat")
    }

    /// User + system seconds used so far by thread `tid` of this process.
    static func thread(_ tid: Int32) -> Double? {
        ProcFS.cpuSeconds(statAt: "/proc/self/task/\(tid)/stat")
    }

    /// The ids of this process's threads.
    static func threadIDs() -> Set<Int32> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(names.compactMap(Int32.init))
    }

    /// The calling thread's CPU seconds (its own clock, finer than /proc's ticks).
    static func currentThread() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
