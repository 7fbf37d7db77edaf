internal import CVPX

/// Decodes VP8 (or VP9) frames into `I420Frame`s.
///
/// Corrupt or unexpected input is reported as a `CodecError`, never a crash; after an
/// error, feed the next keyframe to resynchronise.
/// Not thread-safe and not `Sendable`: one instance per incoming stream, used from one task at a time.
public final class VideoDecoder {
    /// The codec this decoder accepts.
    public let codec: VideoCodec

    // libvpx keeps a pointer to the context, so it lives at a fixed heap address.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private var contextInitialized = false

    /// Creates a single-threaded decoder for `codec`.
    /// - Throws: `CodecError` `.decoderInit` if libvpx cannot create it.
    public init(codec: VideoCodec = .vp8) throws {
        self.codec = codec
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        var config = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)  // size comes from the bitstream
        let status = showroom_vpx_dec_init(context, codec.decoderInterface, &config, 0)
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .decoderInit, message: "could not initialise the \(codec) decoder",
                             libraryMessage: VideoEncoder.lastError(context, status))
        }
        contextInitialized = true
    }

    deinit {
        if contextInitialized {
            vpx_codec_destroy(context)
        }
        context.deinitialize(count: 1)
        context.deallocate()
    }

    /// Decodes one compressed frame.
    /// - Parameter data: one complete frame as produced by `VideoEncoder` (`EncodedVideoFrame.data`).
    /// - Returns: the decoded picture (`d_w × d_h`), or `nil` if the data produced no picture to show.
    /// - Throws: `CodecError` `.invalidInput` for empty data, `.decode` for corrupt or unsupported data
    ///   (including an inter frame before the first keyframe).
    public func decode(_ data: [UInt8]) throws -> I420Frame? {
        guard !data.isEmpty else { throw CodecError.invalidInput("empty \(codec) frame") }
        let status = data.withUnsafeBufferPointer { bytes in
            vpx_codec_decode(context, bytes.baseAddress, UInt32(bytes.count), nil, 0)
        }
        guard status == VPX_CODEC_OK else {
            throw CodecError(code: .decode, message: "\(codec) decoding failed",
                             libraryMessage: VideoEncoder.lastError(context, status))
        }
        var iterator: vpx_codec_iter_t? = nil
        var picture: I420Frame?
        // One frame in gives at most one picture out; drain anyway so nothing stays queued.
        while let image = vpx_codec_get_frame(context, &iterator) {
            picture = try Self.copy(image.pointee)
        }
        return picture
    }

    /// Copies the visible area of a decoder image into a tightly packed frame, honouring strides.
    private static func copy(_ image: vpx_image_t) throws -> I420Frame {
        // VP8 always yields I420; VP9 profiles 1-3 (4:4:4, high bit depth) are not supported.
        guard image.fmt == VPX_IMG_FMT_I420, image.x_chroma_shift == 1, image.y_chroma_shift == 1,
              let yPlane = image.planes.0, let uPlane = image.planes.1, let vPlane = image.planes.2 else {
            throw CodecError(code: .decode, message: "unsupported decoded image format (only 8-bit I420)",
                             libraryMessage: "vpx_img_fmt \(image.fmt.rawValue)")
        }
        let width = Int(image.d_w)
        let height = Int(image.d_h)
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        return try I420Frame(
            width: width, height: height,
            y: plane(yPlane, stride: Int(image.stride.0), width: width, height: height),
            u: plane(uPlane, stride: Int(image.stride.1), width: chromaWidth, height: chromaHeight),
            v: plane(vPlane, stride: Int(image.stride.2), width: chromaWidth, height: chromaHeight))
    }

    private static func plane(_ source: UnsafeMutablePointer<UInt8>, stride: Int,
                              width: Int, height: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height) { buffer, initialized in
            let destination = buffer.baseAddress!
            for row in 0..<height {
                (destination + row * width).initialize(from: source + row * stride, count: width)
            }
            initialized = width * height
        }
    }
}
