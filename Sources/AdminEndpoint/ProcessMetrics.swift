import Foundation
import Prometheus
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Process metrics, refreshed when scraped. On Linux they come from /proc/self; elsewhere only
/// CPU time (getrusage) and an uptime counted from when metrics were set up. A metric that cannot
/// be read is left out of the exposition rather than reported as 0.
final class ProcessMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let prefix: String
    private let setUpAt = ContinuousClock.now
    /// CPU seconds already added to the counter: Prometheus counters only go up by increments.
    private let reportedCPUSeconds = Mutex<Double>(0)

    init(registry: PrometheusCollectorRegistry, prefix: String) {
        self.registry = registry
        self.prefix = prefix
    }

    func update() {
        let sample = ProcessSample.read(setUpAt: setUpAt)
        // Gauges are looked up on each scrape (cheap, and idempotent in the registry) so that a
        // value this platform cannot read never appears.
        if let uptime = sample.uptimeSeconds {
            gauge("process_uptime", "seconds", "Seconds since the process started.").set(uptime)
        }
        if let resident = sample.residentMemoryBytes {
            gauge("process_resident_memory", "bytes", "Resident memory size in bytes.").set(Double(resident))
        }
        if let virtual = sample.virtualMemoryBytes {
            gauge("process_virtual_memory", "bytes", "Virtual memory size in bytes.").set(Double(virtual))
        }
        if let threads = sample.threads {
            gauge("process", "threads", "Threads in the process.").set(Double(threads))
        }
        if let files = sample.openFileDescriptors {
            gauge("process_open", "fds", "Open file descriptors.").set(Double(files))
        }
        if let cpu = sample.cpuSeconds {
            let counter = registry.makeCounter(descriptor: MetricNameDescriptor(
                metricName: prefix + "process_cpu", unitName: "seconds_total",
                helpText: "User and system CPU time spent, in seconds."))
            reportedCPUSeconds.withLock { reported in
                if cpu > reported {
                    counter.increment(by: cpu - reported)
                    reported = cpu
                }
            }
        }
    }

    /// `name` + `_` + `unit`, prefixed.
    private func gauge(_ name: String, _ unit: String, _ help: String) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: prefix + name, unitName: unit, helpText: help))
    }
}

/// One reading of the process's resource use; `nil` where this platform does not say.
struct ProcessSample: Equatable {
    var uptimeSeconds: Double?
    var cpuSeconds: Double?
    var residentMemoryBytes: Int?
    var virtualMemoryBytes: Int?
    var threads: Int?
    var openFileDescriptors: Int?

    static func read(setUpAt: ContinuousClock.Instant) -> ProcessSample {
        var sample = ProcessSample()
        #if os(Linux) || os(Android)
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        if let text = ProcFS.readFile("/proc/self/stat"), let stat = ProcFS.parseStat(text), ticksPerSecond > 0 {
            sample.cpuSeconds = Double(stat.cpuTicks) / ticksPerSecond
            sample.threads = stat.threads
            if let uptimeText = ProcFS.readFile("/proc/uptime"), let systemUptime = ProcFS.parseUptime(uptimeText) {
                // Both clocks tick at 1/100 s at best: round off the subtraction's float noise.
                let uptime = systemUptime - Double(stat.startTicks) / ticksPerSecond
                sample.uptimeSeconds = max(0, (uptime * 100).rounded() / 100)
            }
        }
        if let text = ProcFS.readFile("/proc/self/statm"), let statm = ProcFS.parseStatm(text), pageSize > 0 {
            sample.residentMemoryBytes = statm.residentPages * pageSize
            sample.virtualMemoryBytes = statm.sizePages * pageSize
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            sample.openFileDescriptors = entries.count
        }
        #else
        var usage = rusage()
        if getrusage(RUSAGE_SELF, &usage) == 0 {
            func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
            sample.cpuSeconds = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        }
        #endif
        if sample.uptimeSeconds == nil {
            let elapsed = setUpAt.duration(to: .now).components
            sample.uptimeSeconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        }
        return sample
    }
}

/// Parsers for the few /proc files read, kept pure so they can be tested on any text.
public enum ProcFS {
    /// What is read from a `stat` file.
    public struct Stat: Equatable, Sendable {
        /// utime + stime, in clock ticks.
        public var cpuTicks: UInt64
        /// Threads of the process.
        public var threads: Int
        /// When the process started, in clock ticks after boot.
        public var startTicks: UInt64
    }

    /// User + system CPU seconds from a `stat` file: `/proc/PID/stat` for a process,
    /// `/proc/self/task/TID/stat` for one thread. `nil` if it cannot be read.
    public static func cpuSeconds(statAt path: String) -> Double? {
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0, let text = readFile(path), let stat = parseStat(text) else { return nil }
        return Double(stat.cpuTicks) / ticksPerSecond
    }

    /// Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold
    /// spaces and parentheses, so fields are counted from the last `)`.
    public static func parseStat(_ text: String) -> Stat? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) is index 0, so field n is index n - 3.
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 19,
              let utime = UInt64(fields[11]), let stime = UInt64(fields[12]),
              let threads = Int(fields[17]), let start = UInt64(fields[19])
        else { return nil }
        return Stat(cpuTicks: utime + stime, threads: threads, startTicks: start)
    }

    /// Parses /proc/<pid>/statm: total program size and resident set, in pages.
    static func parseStatm(_ text: String) -> (sizePages: Int, residentPages: Int)? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2, let size = Int(fields[0]), let resident = Int(fields[1]) else { return nil }
        return (size, resident)
    }

    /// Parses /proc/uptime: seconds since boot (its first number).
    static func parseUptime(_ text: String) -> Double? {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first.flatMap { Double($0) }
    }

    /// Reads a small file with plain read(2): /proc files report size 0, which some file APIs
    /// take at its word.
    public static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
