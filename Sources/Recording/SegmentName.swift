import ShowroomWire

/// Where a segment of one uid's recording goes, relative to the recordings directory:
/// `<channel>/<uid>/<start-ms>-<n>.webm`.
///
/// `<start-ms>` is when the recording began (Unix time in ms, by the recorder's clock), so a
/// recording's segments sort together; `<n>` is the segment's number in it (0, 1, 2 …). Only a
/// valid channel name is taken (``Names/validateChannel(_:field:)``), and it never makes a path of
/// its own: it holds no `/`, and a `%` or a leading `.` (which would make `.`, `..` or a hidden
/// file) is written `%25` or `%2E`.
public struct SegmentName: Sendable, Hashable {
    /// The channel recorded.
    public let channel: String
    /// The publisher recorded.
    public let uid: UInt32
    /// When the recording began, Unix time in ms.
    public let startMs: Int64
    /// The segment's number in its recording.
    public let index: Int

    /// Names a segment.
    ///
    /// - Parameters:
    ///   - channel: A valid channel name.
    ///   - uid: The publisher's uid.
    ///   - startMs: When the recording began, Unix time in ms (0 or more).
    ///   - index: The segment's number (0 or more).
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` for an invalid channel name or a negative time
    ///   or number.
    public init(channel: String, uid: UInt32, startMs: Int64, index: Int) throws(ShowroomError) {
        try Names.validateChannel(channel, field: "recording channel")
        guard startMs >= 0 else { throw .invalidArgument("recording start time is \(startMs) ms; it is Unix time, 0 or more") }
        guard index >= 0 else { throw .invalidArgument("recording segment number is \(index); it is 0 or more") }
        self.init(checkedChannel: channel, uid: uid, startMs: startMs, index: index)
    }

    private init(checkedChannel channel: String, uid: UInt32, startMs: Int64, index: Int) {
        self.channel = channel
        self.uid = uid
        self.startMs = startMs
        self.index = index
    }

    /// The channel's directory name: the channel name with `%` and a leading `.` escaped.
    public var channelDirectory: String {
        var directory = ""
        for (offset, character) in channel.enumerated() {
            switch character {
            case "%": directory += "%25"
            case "." where offset == 0: directory += "%2E"
            default: directory.append(character)
            }
        }
        return directory
    }

    /// The file name: `<start-ms>-<n>.webm`.
    public var fileName: String { "\(startMs)-\(index).webm" }

    /// The relative path: `<channel>/<uid>/<start-ms>-<n>.webm`.
    public var relativePath: String { "\(channelDirectory)/\(uid)/\(fileName)" }

    /// The same recording's next segment.
    public var next: SegmentName {
        SegmentName(checkedChannel: channel, uid: uid, startMs: startMs, index: index + 1)
    }
}
