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

    /// The processes on this machine whose executable's name starts with `prefix`, by pid, with
    /// that name and their CPU seconds so far.
    static func processes(named prefix: String) -> [Int32: (name: String, seconds: Double)] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init)
        var found: [Int32: (name: String, seconds: Double)] = [:]
        for pid in pids {
            guard let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                  let executable = command.split(separator: 0).first.map({ String(decoding: $0, as: UTF8.self) }),
                  let name = executable.split(separator: "/").last.map(String.init), name.hasPrefix(prefix),
                  let seconds = process(pid) else { continue }
            found[pid] = (name, seconds)
        }
        return found
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

    /// The machine's CPU time so far, from the first line of /proc/stat: all of it and the part
    /// the hypervisor gave to other guests while this one wanted to run ("steal"), in ticks.
    static func machine() -> (total: UInt64, steal: UInt64)? {
        machineTicks().map { ($0.reduce(0, +), $0[7]) }
    }

    /// The first line of /proc/stat: user nice system idle iowait irq softirq steal, in ticks
    /// (guests are inside user).
    static func machineTicks() -> [UInt64]? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().prefix(8).compactMap { UInt64($0) }
        return fields.count == 8 ? fields : nil
    }

    /// The share of the machine's CPU time stolen by the hypervisor between two ``machine()``
    /// readings, in percent: on a shared virtual machine, the time during which any thread may
    /// stall, which shows up in latency tails.
    static func stealPercent(from before: (total: UInt64, steal: UInt64)?, to after: (total: UInt64, steal: UInt64)?) -> Double? {
        guard let before, let after, after.total > before.total else { return nil }
        return Double(after.steal - before.steal) * 100 / Double(after.total - before.total)
    }
}

/// The CPU time spent in windows (a benchmark's measured parts), summed: the machine's busy time
/// (every process, neither idle nor waiting for I/O), this process's, each `showroom-…`
/// executable's, and the ticks the hypervisor gave to other guests.
struct CPUSpent {
    /// CPU time at one moment.
    struct Snapshot {
        let machine: [UInt64]?
        let own: Double?
        let processes: [Int32: (name: String, seconds: Double)]

        static func now() -> Snapshot {
            Snapshot(machine: CPUTime.machineTicks(), own: CPUTime.process(getpid()),
                     processes: CPUTime.processes(named: "showroom-"))
        }
    }

    private(set) var busySeconds = 0.0
    /// All the machine's CPU time in the windows (every core, busy or not), on the same clock as
    /// ``busySeconds``: what a busy share is taken of.
    private(set) var machineSeconds = 0.0
    private(set) var ownSeconds = 0.0
    /// The other `showroom-…` processes' seconds, by executable name.
    private(set) var byExecutable: [String: Double] = [:]
    private var ticks: (total: UInt64, steal: UInt64) = (0, 0)

    /// Adds what was spent from `start` until now.
    mutating func add(since start: Snapshot) {
        let end = Snapshot.now()
        if let before = start.machine, let after = end.machine {
            let (total, idle, steal) = (after.reduce(0, +) &- before.reduce(0, +), (after[3] + after[4]) &- (before[3] + before[4]),
                                        after[7] &- before[7])
            busySeconds += Double(total > idle ? total - idle : 0) / Double(sysconf(Int32(_SC_CLK_TCK)))
            ticks.total += total
            machineSeconds += Double(total) / Double(sysconf(Int32(_SC_CLK_TCK)))
            ticks.steal += steal
        }
        if let before = start.own, let after = end.own { ownSeconds += after - before }
        for (pid, after) in end.processes where pid != getpid() {
            if let before = start.processes[pid] { byExecutable[after.name, default: 0] += after.seconds - before.seconds }
        }
    }

    /// The machine's busy share of its CPU time, in percent (from /proc/stat's ticks alone, so a
    /// short window does not read above 100); nil when no tick passed.
    var busyPercent: Double? { machineSeconds > 0 ? busySeconds * 100 / machineSeconds : nil }

    /// The share of the machine's CPU time the hypervisor stole, in percent.
    var stealPercent: Double { CPUTime.stealPercent(from: (0, 0), to: ticks) ?? 0 }
}
