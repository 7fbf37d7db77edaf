import ArgumentParser
import Foundation
import Histogram

/// `value` rounded to `places` decimals, for JSON figures.
func rounded(_ value: Double, _ places: Int = 1) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}

/// Prints one JSON object with sorted keys.
func printJSON(_ object: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

/// What a benchmark throws instead of printing a figure computed from no samples (which would
/// read as a result of 0 ms): the figure it could not measure and what to change. ArgumentParser
/// prints it as `Error: …` with exit status 1.
struct NothingMeasured: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// `value` for a JSON figure, or null when it was not measured.
func figure(_ value: Double?, _ places: Int = 1) -> Any {
    value.map { rounded($0, places) } ?? NSNull()
}

/// A progress line: on standard output for people, on standard error when standard output is
/// JSON.
func progress(_ text: String, json: Bool) {
    if json { FileHandle.standardError.write(Data((text + "\n").utf8)) } else { print(text) }
}

/// Latencies in an HdrHistogram of microseconds (three significant digits, growing as needed):
/// constant cost per sample, so hundreds of thousands of frames can be measured, and percentiles
/// within 0.1 % of the recorded values.
struct LatencyHistogram: Sendable {
    private var histogram: Histogram<UInt64>

    /// No samples.
    init() {
        histogram = Histogram(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
    }

    /// Samples in milliseconds (durations measured by the caller).
    init(milliseconds: [Double]) {
        self.init()
        for value in milliseconds { record(microseconds: Int64((value * 1000).rounded())) }
    }

    /// Records one latency; a negative one (clocks a little apart) counts as zero.
    mutating func record(microseconds: Int64) {
        _ = histogram.record(UInt64(max(microseconds, 0)))
    }

    /// Adds another histogram's samples.
    mutating func merge(_ other: LatencyHistogram) {
        histogram.add(other.histogram)
    }

    /// Samples recorded.
    var count: Int { Int(histogram.totalCount) }

    /// The latency in ms at or below which a fraction `p` (0…1) of the samples lie; 0 for none.
    func percentileMs(_ p: Double) -> Double {
        count > 0 ? Double(histogram.valueAtPercentile(p * 100)) / 1000 : 0
    }

    /// The largest latency recorded, in ms; 0 for none.
    var maxMs: Double { count > 0 ? Double(histogram.maxRecorded) / 1000 : 0 }

    /// Throws ``NothingMeasured`` ("no samples of `what`: `why`") when no sample was recorded, so
    /// that ``percentileMs(_:)`` and ``maxMs`` are never printed for an empty histogram.
    func requireSamples(_ what: String, _ why: @autoclosure () -> String) throws {
        guard count == 0 else { return }
        throw NothingMeasured("no samples of \(what): \(why())")
    }

    /// The percentile, or nil for no samples (a figure printed as "not measured").
    func percentileMsIfAny(_ p: Double) -> Double? { count > 0 ? percentileMs(p) : nil }
}

/// Runs `body` for 0..<count from `callers` concurrent callers (caller k takes k, k + callers …).
/// - Returns: Each successful call's latency in ms, the successful calls per second over the
///   whole run, and how many calls failed.
func measureConcurrently(callers: Int, count: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws
    -> (times: [Double], perSecond: Double, failures: Int) {
    let started = ContinuousClock.now
    let results = await withTaskGroup(of: ([Double], Int).self) { group in
        for caller in 0..<callers {
            group.addTask {
                var times: [Double] = []
                var failures = 0
                for i in stride(from: caller, to: count, by: callers) {
                    let start = ContinuousClock.now
                    do {
                        try await body(i)
                        times.append(start.duration(to: .now).seconds * 1000)
                    } catch {
                        failures += 1
                    }
                }
                return (times, failures)
            }
        }
        var all: ([Double], Int) = ([], 0)
        for await (times, failures) in group {
            all.0 += times
            all.1 += failures
        }
        return all
    }
    let elapsed = started.duration(to: .now).seconds
    return (results.0, Double(results.0.count) / max(elapsed, 1e-9), results.1)
}

/// A customer key of the server API: `key` (id:secret), or the api-key file of the run directory
/// (`runDirectory`, else $SHOWROOM_RUN_DIR) a cluster.sh cluster keeps.
func customerKey(_ key: String?, runDirectory: String?) throws -> (id: String, secret: String) {
    var text = key
    if text == nil, let directory = runDirectory ?? ProcessInfo.processInfo.environment["SHOWROOM_RUN_DIR"] {
        text = try? String(contentsOfFile: directory + "/api-key", encoding: .utf8)
    }
    guard let text, let colon = text.firstIndex(of: ":") else {
        throw ValidationError("give --key id:secret, or --run-dir (or SHOWROOM_RUN_DIR) of a cluster.sh cluster, whose api-key holds it")
    }
    return (String(text[..<colon]), String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespacesAndNewlines))
}
