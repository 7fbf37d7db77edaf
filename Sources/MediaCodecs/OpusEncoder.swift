internal import COpus

/// Encodes 20 ms frames of 48 kHz Int16 PCM (mono or stereo) into Opus packets.
///
/// Not thread-safe and not `Sendable`: an encoder carries state from frame to frame,
/// so give each stream its own instance and use it from one task at a time.
public final class OpusEncoder {
    /// Opus' tuning target; chosen at creation, see `setApplication(_:)`.
    public enum Application: Sendable, Equatable {
        /// Speech: favours intelligibility (enables SILK, high-pass, speech-tuned modes).
        case voip
        /// Music or mixed content: favours fidelity to the input.
        case audio
        /// Lowest delay, CELT only; for when every millisecond counts.
        case restrictedLowDelay

        var opusValue: Int32 {
            switch self {
            case .voip: OPUS_APPLICATION_VOIP
            case .audio: OPUS_APPLICATION_AUDIO
            case .restrictedLowDelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
            }
        }
    }

    /// 1 (mono) or 2 (stereo); input PCM is interleaved.
    public let channels: Int
    /// The current application setting.
    public private(set) var application: Application

    private let state: OpaquePointer
    // One packet buffer reused for every frame; 4000 bytes is libopus' recommended maximum.
    private var packetBuffer = [UInt8](repeating: 0, count: 4000)
    private var hasEncoded = false

    /// Creates an encoder.
    /// - Parameters:
    ///   - channels: 1 or 2.
    ///   - application: `.voip` for speech, `.audio` for music.
    ///   - bitrate: target bits per second (Opus accepts 500...512 000).
    /// - Throws: `CodecError` `.invalidInput` for a bad channel count, `.encoderInit` if libopus refuses.
    public init(channels: Int = 1, application: Application = .voip, bitrate: Int = 32_000) throws {
        try AudioFormat.validate(channels: channels)
        try Self.validate(bitrate: bitrate)
        var error: Int32 = OPUS_OK
        guard let state = opus_encoder_create(
            Int32(AudioFormat.sampleRate), Int32(channels), application.opusValue, &error
        ), error == OPUS_OK else {
            throw CodecError(code: .encoderInit, message: "could not create the Opus encoder",
                             libraryMessage: Self.describe(error))
        }
        self.state = state
        self.channels = channels
        self.application = application
        // Fully initialised from here on, so a throw below still runs deinit and frees `state`.
        try setBitrate(bitrate)
    }

    deinit {
        opus_encoder_destroy(state)
    }

    /// The bitrate libopus is currently targeting, in bits per second.
    public var bitrate: Int {
        var value: Int32 = 0
        _ = showroom_opus_get_bitrate(state, &value)
        return Int(value)
    }

    /// Changes the target bitrate (bits per second); takes effect with the next frame.
    public func setBitrate(_ bitsPerSecond: Int) throws {
        try Self.validate(bitrate: bitsPerSecond)
        try check(showroom_opus_set_bitrate(state, Int32(bitsPerSecond)), "could not set the Opus bitrate")
    }

    /// Switches between speech and music tuning.
    ///
    /// libopus only accepts this before the first frame, so once frames have been
    /// encoded the encoder state is reset first (bitrate and other settings are kept;
    /// the stream may click once).
    public func setApplication(_ application: Application) throws {
        guard application != self.application else { return }
        if hasEncoded {
            try check(showroom_opus_encoder_reset(state), "could not reset the Opus encoder")
            hasEncoded = false
        }
        try check(showroom_opus_set_application(state, application.opusValue), "could not set the Opus application")
        self.application = application
    }

    /// Sets the CPU/quality trade-off, 0 (fastest) ... 10 (best, the default).
    public func setComplexity(_ complexity: Int) throws {
        guard (0...10).contains(complexity) else {
            throw CodecError.invalidInput("Opus complexity must be 0...10, got \(complexity)")
        }
        try check(showroom_opus_set_complexity(state, Int32(complexity)), "could not set the Opus complexity")
    }

    /// Turns in-band forward error correction on or off (useful with `setExpectedPacketLoss`).
    public func setInbandFEC(_ enabled: Bool) throws {
        try check(showroom_opus_set_inband_fec(state, enabled ? 1 : 0), "could not set Opus in-band FEC")
    }

    /// Tells the encoder how much loss to expect (0...100 %), so it can spend bits on redundancy.
    public func setExpectedPacketLoss(percent: Int) throws {
        guard (0...100).contains(percent) else {
            throw CodecError.invalidInput("packet loss must be 0...100 %, got \(percent)")
        }
        try check(showroom_opus_set_packet_loss_perc(state, Int32(percent)), "could not set Opus packet loss")
    }

    /// Encodes one 20 ms frame.
    /// - Parameter pcm: exactly `960 × channels` interleaved samples.
    /// - Returns: one Opus packet.
    /// - Throws: `CodecError` `.invalidInput` for a wrong sample count, `.encode` if libopus fails.
    public func encode(_ pcm: [Int16]) throws -> [UInt8] {
        try pcm.withUnsafeBufferPointer { try encode($0) }
    }

    /// Encodes one 20 ms frame from a buffer of exactly `960 × channels` interleaved samples.
    public func encode(_ pcm: UnsafeBufferPointer<Int16>) throws -> [UInt8] {
        let expected = AudioFormat.samplesPerFrame(channels: channels)
        guard pcm.count == expected, let samples = pcm.baseAddress else {
            throw CodecError.invalidInput("an Opus frame needs \(expected) samples, got \(pcm.count)")
        }
        let capacity = Int32(packetBuffer.count)
        let length = packetBuffer.withUnsafeMutableBufferPointer { out in
            opus_encode(state, samples, Int32(AudioFormat.samplesPerChannel), out.baseAddress!, capacity)
        }
        guard length > 0 else {
            throw CodecError(code: .encode, message: "Opus encoding failed", libraryMessage: Self.describe(length))
        }
        hasEncoded = true
        return Array(packetBuffer[0..<Int(length)])
    }

    private static func validate(bitrate: Int) throws {
        guard (500...512_000).contains(bitrate) else {
            throw CodecError.invalidInput("Opus bitrate must be 500...512000 bit/s, got \(bitrate)")
        }
    }

    private func check(_ result: Int32, _ message: String) throws {
        guard result == OPUS_OK else {
            throw CodecError(code: .configure, message: message, libraryMessage: Self.describe(result))
        }
    }

    static func describe(_ error: Int32) -> String {
        String(cString: opus_strerror(error))
    }
}
