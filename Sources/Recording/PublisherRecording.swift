import Foundation
import Logging
import ShowroomWire

/// A file a recording finished: what the webhook of a finished file tells.
public struct RecordedFile: Sendable, Hashable, Codable {
    /// The channel recorded.
    public var channel: String
    /// The publisher recorded.
    public var uid: UInt32
    /// Where the file is, relative to the recordings directory (``SegmentName/relativePath``).
    public var path: String
    /// The segment's number in its recording (0, 1, 2 …).
    public var segment: Int
    /// When its first frame was written, Unix time in ms (the recorder's clock).
    public var startMs: Int64
    /// When its last frame was written, Unix time in ms.
    public var endMs: Int64
    /// Its length on the frames' own timeline, in ms.
    public var durationMs: Int64
    /// Its size in bytes.
    public var bytes: Int64
    /// Its codecs: `vp8` and/or `opus`.
    public var codecs: [String]
    /// Why the file ended early (the write that failed), or nil when it ended as planned.
    public var failure: String?
    /// The recording order it was made for (``PublisherRecording/Settings/recordingID``).
    public var recordingID = ""
}

/// One publisher's recording in one channel: the frames of its video and audio remuxed, as they
/// came, into WebM segments under a directory (``SegmentName``), cut by a ``SegmentPolicy``.
///
/// The first segment waits for a video keyframe (and asks for one); a segment is cut at a
/// keyframe past its length. A write that fails (a full disk, an I/O error) ends the recording
/// with that reason; the part of the file that was whole stays readable. Not thread-safe: one
/// thread feeds it (a ``RecordingWorker``'s).
public final class PublisherRecording {
    /// What the recording asks of its owner, or tells it.
    public enum Event: Sendable, Hashable {
        /// Ask the publisher for a video keyframe: a segment waits for one.
        case wantKeyframe
        /// A segment was finished (or cut short by a failure, then named in it).
        case finished(RecordedFile)
        /// The recording failed and takes no more frames.
        case failed(reason: String)
    }

    /// The recording's tracks and segments.
    public struct Settings: Sendable, Hashable {
        /// The recordings directory; segments go under `<channel>/<uid>/` in it.
        public var directory: String
        /// Whether the publisher's video is recorded.
        public var video: Bool
        /// Whether the publisher's audio is recorded.
        public var audio: Bool
        /// The segment length, in ms of the frames' time.
        public var segmentLengthMs: Int64
        /// How long past the length a cut waits for a video keyframe.
        public var keyframeGraceMs: Int64
        /// The Opus channels the publisher sends.
        public var audioChannels: Int
        /// Who asked for the recording (an order's id), carried into its files' reports.
        public var recordingID = ""

        /// Both tracks, 30-minute segments, mono Opus.
        public init(directory: String, video: Bool = true, audio: Bool = true,
                    segmentLengthMs: Int64 = SegmentPolicy.defaultSegmentLengthMs,
                    keyframeGraceMs: Int64 = SegmentPolicy.defaultKeyframeGraceMs, audioChannels: Int = 1) {
            self.directory = directory
            self.video = video
            self.audio = audio
            self.segmentLengthMs = segmentLengthMs
            self.keyframeGraceMs = keyframeGraceMs
            self.audioChannels = audioChannels
        }
    }

    /// Where the recording stands.
    public enum State: Sendable, Hashable {
        /// Taking frames.
        case recording
        /// Stopped by ``finish(nowMs:)``.
        case finished
        /// Ended by a failure, with its reason.
        case failed(String)
    }

    public let channel: String
    public let uid: UInt32
    public let settings: Settings
    /// When the recording began, Unix time in ms: the `<start-ms>` of its segments' names.
    public let startedAtMs: Int64
    public private(set) var state = State.recording
    /// Frames dropped while no segment was open (before the first keyframe).
    public private(set) var framesDropped = 0
    /// The files finished so far.
    public private(set) var files: [RecordedFile] = []

    private let logger: Logger
    private var policy: SegmentPolicy
    private var writer: WebMWriter?
    private var segment: SegmentName?
    private var segmentStartMs: Int64 = 0
    private var lastFrameMs: Int64 = 0
    /// The segment the policy opened waits for a keyframe (asked for once) before its file is made.
    private var waitingForKeyframe = false
    private var keyframeAsked = false

    /// A recording of `uid` in `channel` that began at `startedAtMs`.
    ///
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` for an invalid channel name, no track, or a
    ///   channel count other than 1 or 2.
    public init(channel: String, uid: UInt32, settings: Settings, startedAtMs: Int64,
                logger: Logger = Logger(label: "showroom.recording")) throws(ShowroomError) {
        _ = try SegmentName(channel: channel, uid: uid, startMs: max(startedAtMs, 0), index: 0)
        guard settings.video || settings.audio else {
            throw .invalidArgument("a recording of uid \(uid) in \(channel) needs its video or its audio")
        }
        guard (1...2).contains(settings.audioChannels) else {
            throw .invalidArgument("Opus with \(settings.audioChannels) channels; 1 or 2 are recorded")
        }
        self.channel = channel
        self.uid = uid
        self.settings = settings
        self.startedAtMs = max(startedAtMs, 0)
        self.logger = logger
        policy = SegmentPolicy(hasVideo: settings.video, segmentLengthMs: settings.segmentLengthMs,
                               keyframeGraceMs: settings.keyframeGraceMs)
    }

    deinit {
        // A recording dropped unfinished still closes its file properly.
        if state == .recording { _ = finish(nowMs: lastFrameMs) }
    }

    /// Takes one VP8 frame of the publisher's.
    ///
    /// - Parameters:
    ///   - payload: The frame, as the publisher sent it.
    ///   - timestampMs: Its capture time on the publisher's clock, in ms; any value.
    ///   - keyframe: Whether it decodes on its own.
    ///   - width: Its picture's width, as its header says.
    ///   - height: Its picture's height.
    ///   - nowMs: The recorder's clock, Unix time in ms.
    /// - Returns: What happened that the owner must act on or report.
    public func video(_ payload: UnsafeRawBufferPointer, timestampMs: Int64, keyframe: Bool, width: Int, height: Int,
                      nowMs: Int64) -> [Event] {
        guard state == .recording, settings.video else { return [] }
        var events = take(policy.next(.video, timestampMs: timestampMs, keyframe: keyframe), nowMs: nowMs)
        if writer == nil {
            guard keyframe, waitingForKeyframe else {
                framesDropped += 1
                if !keyframeAsked {
                    keyframeAsked = true
                    events.append(.wantKeyframe)
                }
                return events
            }
            guard open(video: VideoTrackInfo(width: width, height: height), nowMs: nowMs, &events) else { return events }
        }
        write(nowMs: nowMs, &events) { writer in try writer.write(video: payload, timestampMs: timestampMs, keyframe: keyframe) }
        return events
    }

    /// Takes one Opus packet of the publisher's.
    ///
    /// - Parameters:
    ///   - payload: The packet, as the publisher sent it.
    ///   - timestampMs: Its capture time on the publisher's clock (the video's), in ms; any value.
    ///   - nowMs: The recorder's clock, Unix time in ms.
    /// - Returns: What happened that the owner must act on or report.
    public func audio(_ payload: UnsafeRawBufferPointer, timestampMs: Int64, nowMs: Int64) -> [Event] {
        guard state == .recording, settings.audio else { return [] }
        var events = take(policy.next(.audio, timestampMs: timestampMs, keyframe: true), nowMs: nowMs)
        if writer == nil {
            // With video, a segment's file is made at its first keyframe; audio before it is dropped.
            guard !settings.video, waitingForKeyframe else {
                framesDropped += 1
                return events
            }
            guard open(video: nil, nowMs: nowMs, &events) else { return events }
        }
        write(nowMs: nowMs, &events) { writer in try writer.write(audio: payload, timestampMs: timestampMs) }
        return events
    }

    /// Ends the recording: the open segment is finished.
    ///
    /// - Returns: The last file's ``Event/finished(_:)``, if a segment was open.
    public func finish(nowMs: Int64) -> [Event] {
        guard state == .recording else { return [] }
        state = .finished
        var events: [Event] = []
        close(nowMs: nowMs, &events)
        return events
    }

    // MARK: - Segments

    /// Carries out what the policy said of a frame, before the frame is written.
    private func take(_ action: SegmentPolicy.Action, nowMs: Int64) -> [Event] {
        switch action {
        case .write: []
        case .writeAndRequestKeyframe: [.wantKeyframe]
        case .beginSegment(let index): begin(index, nowMs: nowMs)
        }
    }

    /// The policy begins segment `index`: the open one is finished, and the next one's file is made
    /// with the frame that begins it (with video, a keyframe).
    private func begin(_ index: Int, nowMs: Int64) -> [Event] {
        var events: [Event] = []
        close(nowMs: nowMs, &events)
        guard state == .recording else { return events }
        do throws(ShowroomError) {
            segment = try SegmentName(channel: channel, uid: uid, startMs: startedAtMs, index: index)
        } catch {
            fail(error.message, &events)
            return events
        }
        waitingForKeyframe = true
        keyframeAsked = false
        return events
    }

    private func open(video: VideoTrackInfo?, nowMs: Int64, _ events: inout [Event]) -> Bool {
        guard let segment else { return false }
        let directory = "\(settings.directory)/\(segment.channelDirectory)/\(uid)"
        let path = "\(directory)/\(segment.fileName)"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            writer = try WebMWriter(path: path, video: video,
                                    audio: settings.audio ? AudioTrackInfo(channels: settings.audioChannels) : nil, logger: logger)
        } catch {
            fail("recording \(path): \((error as? ShowroomError)?.message ?? "\(error)")", &events)
            return false
        }
        waitingForKeyframe = false
        segmentStartMs = nowMs
        return true
    }

    private func write(nowMs: Int64, _ events: inout [Event], _ body: (WebMWriter) throws -> Void) {
        guard let writer else { return }
        do {
            try body(writer)
            lastFrameMs = nowMs
        } catch {
            let reason = (error as? ShowroomError)?.message ?? "\(error)"
            fail(reason, &events)
        }
    }

    /// Finishes the open segment's file and reports it.
    private func close(nowMs: Int64, _ events: inout [Event], failure: String? = nil) {
        guard let writer, let segment else { return }
        self.writer = nil
        var failure = failure
        if failure == nil {
            do { try writer.finish() } catch { failure = (error as? ShowroomError)?.message ?? "\(error)" }
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: writer.path))?[.size] as? Int).map(Int64.init) ?? 0
        let file = RecordedFile(
            channel: channel, uid: uid, path: segment.relativePath, segment: segment.index, startMs: segmentStartMs,
            endMs: max(segmentStartMs, lastFrameMs), durationMs: writer.lastTimestampMs, bytes: size,
            codecs: (writer.video == nil ? [] : ["vp8"]) + (writer.audio == nil ? [] : ["opus"]), failure: failure,
            recordingID: settings.recordingID)
        files.append(file)
        events.append(.finished(file))
        if let failure, state == .recording {
            state = .failed(failure)
            events.append(.failed(reason: failure))
        }
    }

    private func fail(_ reason: String, _ events: inout [Event]) {
        guard state == .recording else { return }
        logger.warning("recording failed", metadata: ["channel": "\(channel)", "uid": "\(uid)", "reason": "\(reason)"])
        if writer != nil {
            close(nowMs: lastFrameMs, &events, failure: reason)
        } else {
            state = .failed(reason)
            events.append(.failed(reason: reason))
        }
    }
}
