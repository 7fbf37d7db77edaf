import Foundation

/// The value below which a fraction `p` (0…1) of `values` lie (nearest rank); 0 for none.
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

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

/// A progress line: on standard output for people, on standard error when standard output is
/// JSON.
func progress(_ text: String, json: Bool) {
    if json { FileHandle.standardError.write(Data((text + "\n").utf8)) } else { print(text) }
}

/// Latencies counted in 10 µs buckets up to one second (later ones land in the last bucket):
/// constant memory and cost per sample, so hundreds of thousands of frames can be measured.
struct LatencyHistogram {
    private static let bucketMicroseconds: Int64 = 10
    private var buckets = [Int](repeating: 0, count: 100_001)
    private(set) var count = 0

    mutating func record(microseconds: Int64) {
        buckets[Int(min(max(microseconds / Self.bucketMicroseconds, 0), Int64(buckets.count - 1)))] += 1
        count += 1
    }

    mutating func merge(_ other: LatencyHistogram) {
        for (index, value) in other.buckets.enumerated() where value > 0 { buckets[index] += value }
        count += other.count
    }

    /// The latency in ms below which a fraction `p` (0…1) of the samples lie; 0 for none.
    func percentileMs(_ p: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = Int((Double(count - 1) * p).rounded())
        var seen = 0
        for (index, value) in buckets.enumerated() where value > 0 {
            seen += value
            if seen > rank { return Double(Int64(index) * Self.bucketMicroseconds) / 1000 }
        }
        return 0
    }

    var maxMs: Double {
        guard let index = buckets.lastIndex(where: { $0 > 0 }) else { return 0 }
        return Double(Int64(index) * Self.bucketMicroseconds) / 1000
    }
}
