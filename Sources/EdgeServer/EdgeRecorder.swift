import Edge
import Logging
import Recording
import ShowroomWire
import ZeroMQ

/// Where and how an edge writes recordings.
public struct EdgeRecordingSettings: Sendable, Equatable {
    /// The recordings directory; files go to `<directory>/<channel>/<uid>/<start ms>-<n>.webm`.
    public var directory: String = "showroom-recordings"
    /// The segment length when an order does not set one.
    public var segmentSeconds: Int = 30 * 60
    /// The most frame bytes waiting for the disk before a recording fails ("the disk is too slow").
    public var maxQueuedBytes: Int = RecordingWorker.defaultMaxQueuedBytes

    /// The defaults.
    public init() {}

    /// The keys an edge's configuration file may hold for recordings.
    public static let fileKeys: Set<String> = ["recordingDirectory", "recordingSegmentSeconds", "recordingQueueBytes"]

    /// Checks the values are usable.
    public func validate() throws(ShowroomError) {
        if directory.isEmpty { throw .invalidArgument("recordingDirectory must name a directory") }
        if !(60...86_400).contains(segmentSeconds) { throw .invalidArgument("recordingSegmentSeconds must be 60 to 86400, not \(segmentSeconds)") }
        if !((1 << 20)...(1 << 34)).contains(maxQueuedBytes) {
            throw .invalidArgument("recordingQueueBytes must be 1 MiB to 16 GiB, not \(maxQueuedBytes)")
        }
    }
}

/// The edge's recordings, on its loop: the ``RecordingDesk``'s decisions carried out on a
/// ``RecordingWorker`` (its own thread, so a slow or full disk never holds up the media path),
/// whose reports come back to the loop through `post`.
final class EdgeRecorder {
    var desk = RecordingDesk()
    let settings: EdgeRecordingSettings
    private let worker: RecordingWorker

    /// A recorder writing under `settings.directory` on `worker` (whose reports the edge's server
    /// hops to the shell's loop).
    init(settings: EdgeRecordingSettings, worker: RecordingWorker) {
        self.settings = settings
        self.worker = worker
    }

    /// Starts recording `key` for order `orderID` at `unixNowMs`.
    func start(_ key: RecordingDesk.Key, orderID: String, segmentSeconds: UInt32, unixNowMs: Int64) {
        let seconds = segmentSeconds == 0 ? Int64(settings.segmentSeconds) : Int64(segmentSeconds)
        var recording = PublisherRecording.Settings(directory: settings.directory, segmentLengthMs: seconds * 1000)
        recording.recordingID = orderID
        worker.start(RecordingWorker.Key(channel: key.channel, uid: key.uid), settings: recording, startedAtMs: unixNowMs)
    }

    /// Stops recording `key`: its open file is finished and reported.
    func stop(_ key: RecordingDesk.Key) {
        worker.stop(RecordingWorker.Key(channel: key.channel, uid: key.uid))
    }

    /// Hands one frame (`[envelope][payload]` after the routing id, as received) to the worker;
    /// the payload is copied into its queue.
    func record(_ frame: Multipart, header: WireMediaHeader, info: MediaFrameInfo) {
        let key = RecordingWorker.Key(channel: info.channel, uid: info.publisherUID)
        let timestampMs = Int64(clamping: header.captureTimeUs / 1000)
        frame.withBytes(of: frame.count - 1) { payload in
            switch info.kind {
            case .video:
                var (width, height) = (Int(header.width), Int(header.height))
                if info.isKeyframe, width == 0 || height == 0, let size = Self.vp8KeyframeSize(payload) { (width, height) = size }
                worker.video(key, payload, timestampMs: timestampMs, keyframe: info.isKeyframe, width: width, height: height)
            case .audio:
                worker.audio(key, payload, timestampMs: timestampMs)
            case nil:
                break
            }
        }
    }

    /// The picture size a VP8 keyframe's header gives (RFC 6386 §9.1), for a publisher that left
    /// it out of the media header.
    static func vp8KeyframeSize(_ payload: UnsafeRawBufferPointer) -> (Int, Int)? {
        guard payload.count >= 10, payload[0] & 1 == 0, payload[3] == 0x9d, payload[4] == 0x01, payload[5] == 0x2a else { return nil }
        let width = Int(payload[6]) | Int(payload[7] & 0x3f) << 8
        let height = Int(payload[8]) | Int(payload[9] & 0x3f) << 8
        return width > 0 && height > 0 ? (width, height) : nil
    }
}
