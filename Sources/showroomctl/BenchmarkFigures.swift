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
