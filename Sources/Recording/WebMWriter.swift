internal import CAVFormat
import Logging
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
import ShowroomWire

/// Writes one WebM (Matroska) file of VP8 and Opus frames as a publisher sent them: no decoding,
/// no transcoding.
///
/// Frames carry their track's own timestamps (ms on the publisher's clock); the file's timeline
/// starts at the first frame written, audio and video on it together (``RecordingTimeline``:
/// timestamps that go backwards or jump are corrected, never trusted into arithmetic that could
/// trap). With a video track the file starts on a keyframe: every frame before the first video
/// keyframe, audio included, is dropped and counted (``droppedBeforeKeyframe``).
///
/// The muxer closes a cluster about every second (or every MiB) and each closed cluster is
/// flushed to the file at once, so a file whose process died before ``finish()`` is readable up to
/// its last cluster; ``finish()`` writes the open cluster, the duration and the index (a writer
/// dropped unfinished finishes itself). Matroska's live mode is not used: it leaves the duration
/// out of finished files, and a file cut short reads without it anyway.
///
/// Every failure of the file — it cannot be created, the disk is full, a write fails — is thrown
/// as a ``ShowroomError`` whose message names the file and the reason; the writer stays failed and
/// throws it again on every later call, and once closed the file is cut back to its last whole
/// cluster, so what was written stays readable to its end.
///
/// Not `Sendable`: used from one thread.
public final class WebMWriter {
    /// Milliseconds of frames in one cluster at most: what a crash can lose.
    public static let clusterTimeLimitMs = 1_000
    /// Bytes in one cluster at most.
    public static let clusterSizeLimit = 1 << 20

    /// The file written.
    public let path: String
    /// The video track, if the file has one.
    public let video: VideoTrackInfo?
    /// The audio track, if the file has one.
    public let audio: AudioTrackInfo?

    /// Video frames written.
    public private(set) var videoFramesWritten = 0
    /// Audio frames written.
    public private(set) var audioFramesWritten = 0
    /// Frames dropped because no video keyframe had been written yet.
    public private(set) var droppedBeforeKeyframe = 0
    /// Frames dropped for an empty payload, or for a timestamp past the timeline's last position.
    public private(set) var droppedInvalid = 0
    /// Frames whose timestamp was out of line and were placed by the timeline instead.
    public var timestampCorrections: Int { timeline.corrections }
    /// The position of the latest frame written, in ms from the file's start.
    public var lastTimestampMs: Int64 { timeline.latestMs }
    /// Whether ``finish()`` has run (successfully or not).
    public private(set) var isFinished = false

    private let logger: Logger
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var videoStream: Int32 = -1
    private var audioStream: Int32 = -1
    private var timeline = RecordingTimeline()
    private var failure: ShowroomError?
    /// How much of the file is known to be on disk whole: the header and the clusters flushed.
    private var wholeBytes: Int64 = 0

    /// Creates the file (replacing one of that name) and writes its header.
    ///
    /// - Parameters:
    ///   - path: The file to write; its directory must exist.
    ///   - video: The VP8 track, or nil for none.
    ///   - audio: The Opus track, or nil for none.
    ///   - logger: Where the writer's debug lines go.
    /// - Throws: ``ShowroomError`` `INVALID_ARGUMENT` for no track at all or a track out of range;
    ///   `UNAVAILABLE` when the file cannot be created or written (the message says why);
    ///   `INTERNAL` when the muxer refuses the tracks.
    public init(path: String, video: VideoTrackInfo?, audio: AudioTrackInfo?,
                logger: Logger = Logger(label: "showroom.recording")) throws {
        self.path = path
        self.video = video
        self.audio = audio
        self.logger = logger
        try Self.validate(path: path, video: video, audio: audio)
        // From here the object is whole: a throw runs deinit, which frees what was made.
        try open()
    }

    deinit {
        if failure == nil, !isFinished {
            do {
                try finish()
            } catch {
                logger.debug("recording dropped unfinished, and its end could not be written", metadata: ["error": "\(error)"])
            }
        }
        release()
    }

    /// Writes one VP8 frame.
    ///
    /// - Parameters:
    ///   - payload: The encoded frame, as the publisher sent it.
    ///   - timestampMs: Its timestamp on the publisher's clock, in ms; any value.
    ///   - keyframe: Whether it decodes without earlier frames.
    /// - Throws: ``ShowroomError`` `UNAVAILABLE` when the file cannot be written (disk full, I/O
    ///   error), `INTERNAL` when the muxer refuses the frame, `INVALID_ARGUMENT` when the file has
    ///   no video track.
    public func write(video payload: UnsafeRawBufferPointer, timestampMs: Int64, keyframe: Bool) throws {
        try checkUsable()
        guard video != nil else { throw ShowroomError.invalidArgument("recording \(path) has no video track") }
        if videoFramesWritten == 0, !keyframe {
            droppedBeforeKeyframe += 1
            return
        }
        try write(payload, track: .video, timestampMs: timestampMs, keyframe: keyframe)
    }

    /// Writes one Opus packet.
    ///
    /// - Parameters:
    ///   - payload: The encoded packet, as the publisher sent it.
    ///   - timestampMs: Its timestamp on the publisher's clock (the video's clock), in ms; any value.
    /// - Throws: As ``write(video:timestampMs:keyframe:)``, for the audio track.
    public func write(audio payload: UnsafeRawBufferPointer, timestampMs: Int64) throws {
        try checkUsable()
        guard audio != nil else { throw ShowroomError.invalidArgument("recording \(path) has no audio track") }
        if video != nil, videoFramesWritten == 0 {
            droppedBeforeKeyframe += 1
            return
        }
        // Every Opus packet decodes on its own.
        try write(payload, track: .audio, timestampMs: timestampMs, keyframe: true)
    }

    /// Writes what is left, the duration and the index, and closes the file. Calling it again does
    /// nothing.
    ///
    /// - Throws: ``ShowroomError`` `UNAVAILABLE` when the end of the file cannot be written (the
    ///   file stays readable up to its last cluster), or the failure an earlier call met.
    public func finish() throws {
        guard !isFinished else { return }
        isFinished = true
        defer { release() }
        if let failure { throw failure }
        guard let context else { return }
        let status = av_write_trailer(context)
        guard status >= 0 else { throw fail(status, "writing the end of the file") }
        try flush("writing the end of the file")
        let closed = avio_closep(&context.pointee.pb)
        guard closed >= 0 else { throw fail(closed, "closing the file") }
        logger.debug("recording finished", metadata: [
            "path": "\(path)", "video_frames": "\(videoFramesWritten)", "audio_frames": "\(audioFramesWritten)",
            "duration_ms": "\(timeline.latestMs)", "dropped_before_keyframe": "\(droppedBeforeKeyframe)",
            "dropped_invalid": "\(droppedInvalid)", "timestamp_corrections": "\(timeline.corrections)",
        ])
    }

    // MARK: - Muxing

    private static func validate(path: String, video: VideoTrackInfo?, audio: AudioTrackInfo?) throws {
        guard video != nil || audio != nil else {
            throw ShowroomError.invalidArgument("recording \(path): a file needs a video or an audio track")
        }
        if let video, !(1...VideoTrackInfo.maxSide).contains(video.width) || !(1...VideoTrackInfo.maxSide).contains(video.height) {
            throw ShowroomError.invalidArgument(
                "recording \(path): a VP8 picture of \(video.width)×\(video.height); each side is 1 – \(VideoTrackInfo.maxSide) pixels")
        }
        if let audio, !(1...2).contains(audio.channels) {
            throw ShowroomError.invalidArgument("recording \(path): Opus with \(audio.channels) channels; 1 or 2 are recorded")
        }
    }

    private func open() throws {
        var made: UnsafeMutablePointer<AVFormatContext>?
        let status = avformat_alloc_output_context2(&made, nil, "webm", path)
        guard status >= 0, let context = made else {
            throw fail(status < 0 ? status : showroom_averror(ENOMEM), "setting up the WebM muxer")
        }
        self.context = context
        guard let packet = av_packet_alloc() else { throw fail(showroom_averror(ENOMEM), "setting up the WebM muxer") }
        self.packet = packet

        if let video {
            let stream = try addStream()
            let parameters = stream.pointee.codecpar!
            parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            parameters.pointee.codec_id = AV_CODEC_ID_VP8
            parameters.pointee.width = Int32(video.width)
            parameters.pointee.height = Int32(video.height)
            videoStream = stream.pointee.index
        }
        if let audio {
            let stream = try addStream()
            let parameters = stream.pointee.codecpar!
            parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            parameters.pointee.codec_id = AV_CODEC_ID_OPUS
            parameters.pointee.sample_rate = Int32(AudioTrackInfo.sampleRate)
            av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channels))
            // Matroska's CodecDelay, the pre-skip in time; the muxer checks it against the OpusHead.
            parameters.pointee.initial_padding = Int32(audio.preSkip)
            let head = audio.opusHead
            guard let extradata = av_mallocz(head.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                throw fail(showroom_averror(ENOMEM), "setting up the Opus track")
            }
            extradata.copyMemory(from: head, byteCount: head.count)
            parameters.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
            parameters.pointee.extradata_size = Int32(head.count)
            audioStream = stream.pointee.index
        }

        let opened = avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        guard opened >= 0 else { throw fail(opened, "creating the file") }

        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "cluster_time_limit", "\(Self.clusterTimeLimitMs)", 0)
        av_dict_set(&options, "cluster_size_limit", "\(Self.clusterSizeLimit)", 0)
        let header = avformat_write_header(context, &options)
        guard header >= 0 else { throw fail(header, "writing the header") }
        try flush("writing the header")
    }

    private func addStream() throws -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else {
            throw fail(showroom_averror(ENOMEM), "adding a track")
        }
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        return stream
    }

    private func write(_ payload: UnsafeRawBufferPointer, track: RecordedTrack, timestampMs: Int64, keyframe: Bool) throws {
        guard let base = payload.baseAddress, payload.count > 0, payload.count <= Int(Int32.max) else {
            droppedInvalid += 1
            return
        }
        guard let position = timeline.place(track, timestampMs: timestampMs) else {
            droppedInvalid += 1
            return
        }
        guard let context, let packet else { return }
        let index = track == .video ? videoStream : audioStream
        let timeBase = context.pointee.streams[Int(index)]!.pointee.time_base
        // The muxer reads the payload during the call and copies what it keeps (a held audio packet).
        packet.pointee.data = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        packet.pointee.size = Int32(payload.count)
        packet.pointee.stream_index = index
        packet.pointee.pts = av_rescale_q(position, AVRational(num: 1, den: 1000), timeBase)
        packet.pointee.dts = packet.pointee.pts
        packet.pointee.flags = keyframe ? AV_PKT_FLAG_KEY : 0
        let status = av_write_frame(context, packet)
        packet.pointee.data = nil
        packet.pointee.size = 0
        guard status >= 0 else { throw fail(status, "writing a \(track) frame") }
        // A cluster the muxer just closed sits in the I/O buffer: out to the file with it.
        try flush("writing a \(track) frame")
        if track == .video { videoFramesWritten += 1 } else { audioFramesWritten += 1 }
    }

    private func flush(_ action: String) throws {
        guard let io = context?.pointee.pb else { return }
        avio_flush(io)
        let status = io.pointee.error
        guard status >= 0 else { throw fail(status, action) }
        wholeBytes = avio_tell(io)
    }

    private func checkUsable() throws {
        if let failure { throw failure }
        guard !isFinished else { throw ShowroomError.internal("recording \(path): written to after finish()") }
    }

    /// The error for a libav failure, kept so later calls throw it too: `UNAVAILABLE` for the
    /// system's errors (the disk, the file), `INTERNAL` for the muxer's own.
    private func fail(_ status: Int32, _ action: String) -> ShowroomError {
        let code: ShowroomError.Code = showroom_averror_errno(status) != 0 ? .unavailable : .internal
        let error = ShowroomError(code, "recording \(path): \(Self.describe(status)) (\(action))")
        failure = failure ?? error
        logger.debug("recording failed", metadata: ["path": "\(path)", "error": "\(error)"])
        return error
    }

    private static func describe(_ status: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard av_strerror(status, &buffer, buffer.count) == 0 else { return "libav error \(status)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Frees the muxer and closes the file; after a failure, cuts off what a failed write left
    /// after the last whole cluster (part of a cluster, which readers would stumble on).
    private func release() {
        if let context {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
            self.context = nil
        }
        if packet != nil { av_packet_free(&packet) }
        // Nothing is cut when not even the header was written: the path may not be a file of ours.
        var file = stat()
        if failure != nil, wholeBytes > 0, stat(path, &file) == 0, file.st_mode & S_IFMT == S_IFREG, file.st_size > wholeBytes {
            _ = truncate(path, off_t(wholeBytes))
        }
    }
}

@available(*, unavailable)
extension WebMWriter: Sendable {}
