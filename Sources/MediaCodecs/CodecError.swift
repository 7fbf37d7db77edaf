/// An error raised by the media codecs.
///
/// `code` is stable and meant for programmatic handling (and for mapping onto wire
/// errors); `libraryMessage` carries libopus' / libvpx's own description when there
/// is one; `message` is a person-readable sentence.
public struct CodecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable error category.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable string form, e.g. `"encoder_init"`.
        public let rawValue: String

        /// Wraps a raw code string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creating or configuring an encoder failed.
        public static let encoderInit = Code(rawValue: "encoder_init")
        /// Creating a decoder failed.
        public static let decoderInit = Code(rawValue: "decoder_init")
        /// Changing a setting of a running codec failed.
        public static let configure = Code(rawValue: "configure")
        /// Encoding a frame failed.
        public static let encode = Code(rawValue: "encode")
        /// Decoding a packet failed (corrupt, truncated or unsupported data).
        public static let decode = Code(rawValue: "decode")
        /// The caller passed data of the wrong shape (size, channel count, dimensions).
        public static let invalidInput = Code(rawValue: "invalid_input")

        /// The raw string.
        public var description: String { rawValue }
    }

    /// The stable error category.
    public let code: Code
    /// The codec library's own error text (e.g. from `opus_strerror` or `vpx_codec_error`), if any.
    public let libraryMessage: String?
    /// A person-readable description of what went wrong.
    public let message: String

    /// Creates an error.
    public init(code: Code, message: String, libraryMessage: String? = nil) {
        self.code = code
        self.message = message
        self.libraryMessage = libraryMessage
    }

    /// `message`, followed by the library's text when there is one.
    public var description: String {
        if let libraryMessage, !libraryMessage.isEmpty {
            return "\(message) (\(code): \(libraryMessage))"
        }
        return "\(message) (\(code))"
    }

    static func invalidInput(_ message: String) -> CodecError {
        CodecError(code: .invalidInput, message: message)
    }
}
