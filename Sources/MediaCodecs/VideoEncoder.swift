internal import CVPX

/// A realtime VP8 (or VP9) encoder for `I420Frame`s.
///
/// Tuned for live streaming rather than quality per bit: one-pass CBR, realtime
/// deadline, one thread, no lag (each `encode` call returns its own frame at once),
/// error-resilient mode (so a decoder can recover after loss), frame dropping off.
/// Not thread-safe and not `Sendable`: one instance per outgoing stream, used from one task at a time.
public final class VideoEncoder {
    /// Encoder settings.
    public struct Configuration: Equatable, Sendable {
        /// Which codec to produce.
        public var codec: VideoCodec
        /// Frame width in pixels; every encoded frame must have this size.
        public var width: Int
        /// Frame height in pixels.
        public var height: Int
        /// Nominal frame rate; also the time base (`pts` counts frames).
        public var framesPerSecond: Int
        /// Target bitrate in kbit/s.
        public var targetBitrateKbps: Int
        /// Maximum distance between keyframes, in frames (the GOP length).
        public var keyframeInterval: Int
        /// Speed setting (VP8E_SET_CPUUSED); `nil` picks the codec's realtime default
        /// (VP8 -6, VP9 7). Faster values cost quality.
        public var cpuUsed: Int?

        /// Creates a configuration; the defaults suit a 30 fps camera stream.
        public init(codec: VideoCodec = .vp8, width: Int, height: Int, framesPerSecond: Int = 30,
                    targetBitrateKbps: Int = 500, keyframeInterval: Int = 60, cpuUsed: Int? = nil) {
            self.codec = codec
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.targetBitrateKbps = targetBitrateKbps
            self.keyframeInterval = keyframeInterval
            self.cpuUsed = cpuUsed
        }
    }

    /// The settings in effect (bitrate follows `setTargetBitrate(kbps:)`).
    public private(set) var configuration: Configuration
    /// Number of frames submitted so far; the next frame's `pts`.
    public private(set) var framesEncoded: Int64 = 0

    // libvpx keeps pointers into the context and configuration, so both live at fixed heap addresses.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private let encoderConfig: UnsafeMutablePointer<vpx_codec_enc_cfg_t>
    // One input image, allocated once and refilled for every frame.
    private let image: UnsafeMutablePointer<vpx_image_t>
    private var contextInitialized = false

    /// Creates an encoder.
    /// - Throws: `CodecError` `.invalidInput` for out-of-range settings, `.encoderInit` if libvpx refuses them.
    public init(configuration: Configuration) throws {
        let c = configuration
        guard c.width > 0, c.height > 0, c.width <= 16_384, c.height <= 16_384 else {
            throw CodecError.invalidInput("video size must be 1...16384 on each side, got \(c.width)×\(c.height)")
        }
        guard c.framesPerSecond > 0, c.targetBitrateKbps > 0, c.keyframeInterval > 0 else {
            throw CodecError.invalidInput("frame rate, bitrate and keyframe interval must be positive")
        }
        self.configuration = configuration
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        encoderConfig = .allocate(capacity: 1)
        encoderConfig.initialize(to: vpx_codec_enc_cfg_t())
        image = .allocate(capacity: 1)
        image.initialize(to: vpx_image_t())
        // From here on deinit runs even if we throw, and frees whatever was set up.

        guard vpx_img_alloc(image, VPX_IMG_FMT_I420, UInt32(c.width), UInt32(c.height), 16) != nil else {
            throw CodecError(code: .encoderInit, message: "could not allocate a \(c.width)×\(c.height) image")
        }
        let iface = c.codec.encoderInterface
        var status = vpx_codec_enc_config_default(iface, encoderConfig, 0)
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .encoderInit, message: "no default \(c.codec) encoder configuration",
                             libraryMessage: String(cString: vpx_codec_err_to_string(status)))
        }
        let cfg = encoderConfig
        cfg.pointee.g_w = UInt32(c.width)
        cfg.pointee.g_h = UInt32(c.height)
        cfg.pointee.g_timebase = vpx_rational(num: 1, den: Int32(c.framesPerSecond))
        cfg.pointee.g_threads = 1
        cfg.pointee.g_pass = VPX_RC_ONE_PASS
        cfg.pointee.g_lag_in_frames = 0  // no look-ahead: output is produced in the same call
        cfg.pointee.g_error_resilient = SHOWROOM_VPX_ERROR_RESILIENT_DEFAULT
        cfg.pointee.rc_end_usage = VPX_CBR
        cfg.pointee.rc_target_bitrate = UInt32(c.targetBitrateKbps)
        cfg.pointee.rc_dropframe_thresh = 0  // every input frame yields an output frame
        cfg.pointee.rc_resize_allowed = 0
        cfg.pointee.rc_min_quantizer = 2
        cfg.pointee.rc_max_quantizer = 56
        cfg.pointee.rc_undershoot_pct = 100
        cfg.pointee.rc_overshoot_pct = 15
        // Small client buffer (ms): keeps frame sizes steady, which suits live delivery.
        cfg.pointee.rc_buf_initial_sz = 500
        cfg.pointee.rc_buf_optimal_sz = 600
        cfg.pointee.rc_buf_sz = 1000
        cfg.pointee.kf_mode = VPX_KF_AUTO
        cfg.pointee.kf_min_dist = 0
        cfg.pointee.kf_max_dist = UInt32(c.keyframeInterval)

        status = showroom_vpx_enc_init(context, iface, cfg, 0)
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .encoderInit, message: "could not initialise the \(c.codec) encoder",
                             libraryMessage: Self.lastError(context, status))
        }
        contextInitialized = true

        try control(showroom_vp8_set_cpuused(context, Int32(c.cpuUsed ?? c.codec.defaultCPUUsed)), "cpu-used")
        // Skip encoding blocks that barely changed: cheap savings on static content.
        try control(showroom_vp8_set_static_threshold(context, 1), "static threshold")
        // Cap keyframe size to limit bursts; WebRTC's rule: half the optimal buffer, in frames (≥ 300 %).
        let maxIntraPercent = max(300, Int(cfg.pointee.rc_buf_optimal_sz) / 2 * c.framesPerSecond / 10)
        try control(showroom_vp8_set_max_intra_bitrate_pct(context, UInt32(maxIntraPercent)), "max intra bitrate")
        if c.codec == .vp8 {
            try control(showroom_vp8_set_noise_sensitivity(context, 0), "noise sensitivity")  // VP8-only control
        }
        if c.codec == .vp9 {
            try control(showroom_vp9_set_aq_mode(context, 3), "aq mode")  // cyclic refresh
            try control(showroom_vp9_set_row_mt(context, 0), "row mt")
            try control(showroom_vp9_set_tile_columns(context, 0), "tile columns")
        }
    }

    deinit {
        if contextInitialized {
            vpx_codec_destroy(context)
        }
        vpx_img_free(image)  // frees the pixel buffer only; the struct is ours
        image.deinitialize(count: 1)
        image.deallocate()
        encoderConfig.deinitialize(count: 1)
        encoderConfig.deallocate()
        context.deinitialize(count: 1)
        context.deallocate()
    }

    /// Changes the target bitrate of the running encoder; applies from the next frame.
    public func setTargetBitrate(kbps: Int) throws {
        guard kbps > 0 else { throw CodecError.invalidInput("bitrate must be positive, got \(kbps)") }
        encoderConfig.pointee.rc_target_bitrate = UInt32(kbps)
        let status = vpx_codec_enc_config_set(context, encoderConfig)
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .configure, message: "could not change the bitrate to \(kbps) kbit/s",
                             libraryMessage: Self.lastError(context, status))
        }
        configuration.targetBitrateKbps = kbps
    }

    /// Encodes one frame.
    /// - Parameters:
    ///   - frame: a frame of exactly the configured size.
    ///   - forceKeyframe: make this frame a keyframe (e.g. a new viewer joined or a receiver reported loss).
    /// - Returns: the compressed frame(s) the encoder emitted; with this configuration normally exactly one.
    /// - Throws: `CodecError` `.invalidInput` for a frame of the wrong size, `.encode` if libvpx fails.
    public func encode(_ frame: I420Frame, forceKeyframe: Bool = false) throws -> [EncodedVideoFrame] {
        guard frame.width == configuration.width, frame.height == configuration.height, frame.isValid else {
            throw CodecError.invalidInput(
                "frame is \(frame.width)×\(frame.height), the encoder expects \(configuration.width)×\(configuration.height)")
        }
        copyIntoImage(frame)
        let pts = framesEncoded
        let flags = forceKeyframe ? SHOWROOM_VPX_EFLAG_FORCE_KF : 0
        let status = vpx_codec_encode(context, image, pts, 1, flags, SHOWROOM_VPX_DL_REALTIME)
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .encode, message: "\(configuration.codec) encoding failed",
                             libraryMessage: Self.lastError(context, status))
        }
        framesEncoded += 1

        var output: [EncodedVideoFrame] = []
        var iterator: vpx_codec_iter_t? = nil
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let info = packet.pointee.data.frame
            let bytes = UnsafeRawBufferPointer(start: info.buf, count: info.sz)
            output.append(EncodedVideoFrame(
                data: [UInt8](bytes),
                isKeyframe: info.flags & SHOWROOM_VPX_FRAME_IS_KEY != 0,
                pts: info.pts))
        }
        return output
    }

    /// Copies the tightly packed planes row by row into the image, which has padded strides.
    private func copyIntoImage(_ frame: I420Frame) {
        let img = image.pointee
        Self.copyPlane(frame.y, width: frame.width, height: frame.height,
                       to: img.planes.0!, stride: Int(img.stride.0))
        Self.copyPlane(frame.u, width: frame.chromaWidth, height: frame.chromaHeight,
                       to: img.planes.1!, stride: Int(img.stride.1))
        Self.copyPlane(frame.v, width: frame.chromaWidth, height: frame.chromaHeight,
                       to: img.planes.2!, stride: Int(img.stride.2))
    }

    private static func copyPlane(_ plane: [UInt8], width: Int, height: Int,
                                  to destination: UnsafeMutablePointer<UInt8>, stride: Int) {
        plane.withUnsafeBufferPointer { source in
            let base = source.baseAddress!
            for row in 0..<height {
                (destination + row * stride).update(from: base + row * width, count: width)
            }
        }
    }

    private func control(_ status: vpx_codec_err_t, _ what: String) throws {
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .encoderInit, message: "could not set the \(configuration.codec) \(what)",
                             libraryMessage: Self.lastError(context, status))
        }
    }

    /// libvpx's description of the last error, with its detail when it has one.
    static func lastError(_ context: UnsafeMutablePointer<vpx_codec_ctx_t>, _ status: vpx_codec_err_t) -> String {
        var text = String(cString: vpx_codec_err_to_string(status))
        if let detail = vpx_codec_error_detail(context) {
            text += ": " + String(cString: detail)
        }
        return text
    }
}
