import Foundation
import Logging

/// A node's log lines on standard error: the stream handler's layout
/// (`time level label: metadata [source] message`) with the time in UTC to the millisecond, so
/// the logs of several processes line up when an event takes less than a second (a failover, a
/// rejoin).
public struct NodeLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error { merged["error.message"] = "\(error)" }
        let fields = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line = "\(Self.timestamp()) \(event.level) \(label):\(fields) [\(event.source)] \(event.message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// `2026-11-26T18:18:24.123Z`.
    static func timestamp(_ now: timespec = { var now = timespec(); clock_gettime(CLOCK_REALTIME, &now); return now }()) -> String {
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int32(now.tv_nsec / 1_000_000))
    }
}
