import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A counter's or gauge's value as a member's admin port serves it (`GET /metrics`, Prometheus
/// text): the sample named `name` (or `name_total`), summed over its label sets; 0 when absent.
public func adminMetric(_ name: String, at admin: String) async throws -> Double {
    guard let url = URL(string: "\(admin)/metrics") else { return 0 }
    let (data, _) = try await URLSession.shared.data(from: url)
    var total = 0.0
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n")
    where line.hasPrefix(name + " ") || line.hasPrefix(name + "_total ") || line.hasPrefix(name + "{") || line.hasPrefix(name + "_total{") {
        total += Double(line.split(separator: " ").last ?? "") ?? 0
    }
    return total
}
