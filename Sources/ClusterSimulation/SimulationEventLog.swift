import Crypto
import Foundation

/// Every event of a run — a message delivered, dropped or answered, a timer, a fault, a client
/// operation — folded into SHA-256 as one line of text, in the order it happened. Two runs of one
/// seed give the same digest exactly when they did the same things in the same order.
public struct SimulationEventLog {
    private var hash = SHA256()
    /// Events folded so far.
    public private(set) var count = 0
    /// The lines, when kept (to find where two runs part).
    public private(set) var lines: [String]?
    /// The last `tailLimit` lines, always kept: what a failure report shows.
    public private(set) var tail: [String] = []
    private let tailLimit = 40

    init(keepLines: Bool) {
        lines = keepLines ? [] : nil
    }

    mutating func record(_ timeMs: Int64, _ line: String) {
        let text = "\(count) t=\(timeMs) \(line)\n"
        hash.update(data: Data(text.utf8))
        count += 1
        lines?.append(text)
        tail.append(text)
        if tail.count > tailLimit { tail.removeFirst() }
    }

    /// The digest of every line so far, in hex.
    public var digest: String {
        hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

extension SimulationEventLog {
    /// One digest for many runs: SHA-256 over their digests, in the order given.
    public static func combined(_ digests: [String]) -> String {
        var log = SimulationEventLog(keepLines: false)
        for digest in digests { log.record(0, digest) }
        return log.digest
    }
}
