import Foundation

/// CPU time used by processes and threads, read from /proc (Linux): what the fan-out benchmark
/// divides by the bytes delivered.
enum CPUTime {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// User + system seconds used so far by process `pid`, or `nil` if it cannot be read.
    static func process(_ pid: Int32) -> Double? {
        seconds(inStat: "/proc/\(pid)/stat")
    }

    /// User + system seconds used so far by thread `tid` of this process.
    static func thread(_ tid: Int32) -> Double? {
        seconds(inStat: "/proc/self/task/\(tid)/stat")
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

    /// utime + stime of a `stat` file: fields 14 and 15, counted after the parenthesised name
    /// (which may itself hold spaces).
    private static func seconds(inStat path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }
}
