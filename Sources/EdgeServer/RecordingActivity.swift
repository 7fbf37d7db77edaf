import Recording
import ShowroomWire

/// The channel activities a recording's end becomes (types 121 and 122): numbered by the
/// channel's owner coordinator like any, and posted as the file's signed webhook. Plain values in,
/// the wire activity out.
enum RecordingActivity {
    /// The most characters of a failure's reason carried.
    static let maxFailureLength = 1024

    /// A file the recording of `key` finished (type 121), at `atMs` on the wall clock.
    static func finished(_ key: RecordingWorker.Key, _ file: RecordedFile, atMs: Int64) -> RoomChannelActivity {
        var activity = base(.recordingFile, key, orderID: file.recordingID, atMs: atMs)
        activity.recording.path = file.path
        activity.recording.segment = UInt32(clamping: file.segment)
        activity.recording.startMs = file.startMs
        activity.recording.endMs = file.endMs
        activity.recording.durationMs = file.durationMs
        activity.recording.bytes = UInt64(clamping: file.bytes)
        activity.recording.codecs = file.codecs
        activity.recording.failure = String((file.failure ?? "").prefix(maxFailureLength))
        return activity
    }

    /// The recording of `key` failed before any file (type 122) for `reason`; `orderID`: the
    /// order it ran for, if it was running.
    static func failed(_ key: RecordingWorker.Key, orderID: String?, reason: String, atMs: Int64) -> RoomChannelActivity {
        var activity = base(.recordingFailed, key, orderID: orderID ?? "", atMs: atMs)
        activity.recording.failure = String(reason.prefix(maxFailureLength))
        return activity
    }

    private static func base(_ type: RoomChannelEventType, _ key: RecordingWorker.Key, orderID: String, atMs: Int64) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.type = type
        activity.channel = key.channel
        activity.uid = key.uid
        activity.atMs = atMs
        activity.recording.recordingID = orderID
        return activity
    }
}
