internal import CVPX

/// A video codec provided by libvpx.
///
/// VP8 is what the cluster uses today; VP9 is wired through the same encoder and
/// decoder and can be switched on per stream.
public enum VideoCodec: String, Sendable, CaseIterable {
    /// VP8 (RFC 6386).
    case vp8
    /// VP9, profile 0 (8-bit 4:2:0).
    case vp9

    var encoderInterface: OpaquePointer? {
        switch self {
        case .vp8: vpx_codec_vp8_cx()
        case .vp9: vpx_codec_vp9_cx()
        }
    }

    var decoderInterface: OpaquePointer? {
        switch self {
        case .vp8: vpx_codec_vp8_dx()
        case .vp9: vpx_codec_vp9_dx()
        }
    }

    /// The realtime speed setting (VP8E_SET_CPUUSED) used unless configured otherwise.
    /// VP8 -6 and VP9 7 are the values WebRTC uses for realtime on desktop-class CPUs.
    var defaultCPUUsed: Int {
        switch self {
        case .vp8: -6
        case .vp9: 7
        }
    }
}
