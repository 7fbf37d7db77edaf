internal import COpus

/// Decodes Opus packets into 48 kHz interleaved Int16 PCM, with packet-loss concealment.
///
/// Not thread-safe and not `Sendable`: one instance per incoming stream, used from one task at a time.
public final class OpusDecoder {
    /// 1 (mono) or 2 (stereo); output PCM is interleaved.
    public let channels: Int

    private let state: OpaquePointer

    /// Creates a decoder for `channels` output channels (1 or 2).
    ///
    /// The channel count is the *output* layout: libopus up- or down-mixes packets
    /// encoded with the other count.
    public init(channels: Int = 1) throws {
        try AudioFormat.validate(channels: channels)
        var error: Int32 = OPUS_OK
        guard let state = opus_decoder_create(Int32(AudioFormat.sampleRate), Int32(channels), &error),
              error == OPUS_OK else {
            throw CodecError(code: .decoderInit, message: "could not create the Opus decoder",
                             libraryMessage: OpusEncoder.describe(error))
        }
        self.state = state
        self.channels = channels
    }

    deinit {
        opus_decoder_destroy(state)
    }

    /// Decodes one packet, or conceals a lost one.
    /// - Parameter packet: an Opus packet, or `nil` when the packet was lost: the decoder
    ///   then synthesises 20 ms of plausible audio from its history (packet-loss concealment).
    /// - Returns: interleaved samples, `960 × channels` for a 20 ms packet (longer packets give more).
    /// - Throws: `CodecError` `.invalidInput` for an empty packet, `.decode` for corrupt data.
    public func decode(_ packet: [UInt8]?) throws -> [Int16] {
        guard let packet else {
            return try decodeInto(samplesPerChannel: AudioFormat.samplesPerChannel, data: nil, length: 0)
        }
        guard !packet.isEmpty else {
            throw CodecError.invalidInput("empty Opus packet (pass nil to conceal a lost packet)")
        }
        return try packet.withUnsafeBufferPointer { bytes in
            let base = bytes.baseAddress!
            let length = Int32(bytes.count)
            // Size the output exactly from the packet header, so there is one allocation and no copy.
            let samples = opus_packet_get_nb_samples(base, length, Int32(AudioFormat.sampleRate))
            guard samples > 0 else {
                // 0 means "no frames", which opus_decode would also reject as an invalid packet.
                throw CodecError(code: .decode, message: "invalid Opus packet",
                                 libraryMessage: OpusEncoder.describe(samples < 0 ? samples : OPUS_INVALID_PACKET))
            }
            return try decodeInto(samplesPerChannel: Int(samples), data: base, length: length)
        }
    }

    /// Forgets all history, as for a new stream (e.g. after a source switch).
    public func reset() {
        _ = showroom_opus_decoder_reset(state)
    }

    private func decodeInto(samplesPerChannel: Int, data: UnsafePointer<UInt8>?, length: Int32) throws -> [Int16] {
        var failure: Int32 = 0
        let pcm = [Int16](unsafeUninitializedCapacity: samplesPerChannel * channels) { buffer, initialized in
            let decoded = opus_decode(state, data, length, buffer.baseAddress!, Int32(samplesPerChannel), 0)
            if decoded < 0 {
                failure = decoded
                initialized = 0
            } else {
                initialized = Int(decoded) * channels
            }
        }
        guard failure == 0 else {
            throw CodecError(code: .decode, message: "Opus decoding failed",
                             libraryMessage: OpusEncoder.describe(failure))
        }
        return pcm
    }
}
