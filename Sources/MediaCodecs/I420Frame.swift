/// An uncompressed 8-bit YUV 4:2:0 picture (I420) with tightly packed planes.
///
/// The chroma planes are `chromaWidth × chromaHeight`, i.e. half the luma size rounded
/// up, so odd dimensions work. Planes are public and mutable for in-place drawing; keep
/// their sizes (`isValid`), which the encoder checks.
public struct I420Frame: Equatable, Sendable {
    /// Luma width in pixels.
    public let width: Int
    /// Luma height in pixels.
    public let height: Int
    /// Luma plane, `width × height` bytes, row-major without padding.
    public var y: [UInt8]
    /// Cb plane, `chromaWidth × chromaHeight` bytes.
    public var u: [UInt8]
    /// Cr plane, `chromaWidth × chromaHeight` bytes.
    public var v: [UInt8]

    /// Width of the chroma planes: `(width + 1) / 2`.
    public var chromaWidth: Int { (width + 1) / 2 }
    /// Height of the chroma planes: `(height + 1) / 2`.
    public var chromaHeight: Int { (height + 1) / 2 }

    /// Creates a uniformly coloured frame (by default video black: Y 16, U/V 128).
    /// - Precondition: `width` and `height` are positive.
    public init(width: Int, height: Int, luma: UInt8 = 16, cb: UInt8 = 128, cr: UInt8 = 128) {
        precondition(width > 0 && height > 0, "I420Frame needs a positive size")
        self.width = width
        self.height = height
        let chromaCount = ((width + 1) / 2) * ((height + 1) / 2)
        y = [UInt8](repeating: luma, count: width * height)
        u = [UInt8](repeating: cb, count: chromaCount)
        v = [UInt8](repeating: cr, count: chromaCount)
    }

    /// Wraps existing planes.
    /// - Throws: `CodecError` `.invalidInput` if a size is non-positive or a plane has the wrong length.
    public init(width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8]) throws {
        guard width > 0, height > 0 else {
            throw CodecError.invalidInput("I420Frame needs a positive size, got \(width)×\(height)")
        }
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
        guard isValid else {
            throw CodecError.invalidInput(
                "I420 planes for \(width)×\(height) must be \(width * height)/\(chromaWidth * chromaHeight)"
                    + "/\(chromaWidth * chromaHeight) bytes, got \(y.count)/\(u.count)/\(v.count)")
        }
    }

    /// Whether every plane still has the length the dimensions require.
    public var isValid: Bool {
        let chromaCount = chromaWidth * chromaHeight
        return y.count == width * height && u.count == chromaCount && v.count == chromaCount
    }
}
