public import MediaCodecs
import Synchronization

/// A camera: frames in I420 at a fixed size and rate. Called on the engine's loop thread, once
/// per frame interval, while a connection publishes video.
public protocol VideoSource: Sendable {
    /// Frame width in pixels.
    var width: Int { get }
    /// Frame height in pixels.
    var height: Int { get }
    /// Frames per second the engine asks for.
    var framesPerSecond: Int { get }
    /// The next picture (exactly `width × height`).
    func nextFrame() -> I420Frame
}

/// A VP8 frame the app encoded itself (a recorded clip, a hardware encoder, a relay), for
/// ``ShowroomEngine/pushExternalEncodedVideoFrame(_:)``: the seeds' custom encoded video track.
public struct ExternalEncodedVideoFrame: Sendable, Hashable {
    /// The encoded frame, sent untouched.
    public var data: [UInt8]
    /// Decodes without earlier frames.
    public var isKeyframe: Bool
    /// Picture width in pixels.
    public var width: Int
    /// Picture height in pixels.
    public var height: Int
    /// When the picture was captured, on ``MediaClock``; `nil`: when it is pushed.
    public var captureTimeMicroseconds: UInt64?

    /// A frame of `width × height` pixels.
    public init(data: [UInt8], isKeyframe: Bool, width: Int, height: Int, captureTimeMicroseconds: UInt64? = nil) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.width = width
        self.height = height
        self.captureTimeMicroseconds = captureTimeMicroseconds
    }

    /// A frame of the SDK's own encoder (``VideoEncoder``), at `width × height`.
    public init(_ frame: EncodedVideoFrame, width: Int, height: Int, captureTimeMicroseconds: UInt64? = nil) {
        self.init(data: frame.data, isKeyframe: frame.isKeyframe, width: width, height: height,
                  captureTimeMicroseconds: captureTimeMicroseconds)
    }
}

/// A microphone: 20 ms of 48 kHz mono PCM per call (960 samples). Called on the engine's loop
/// thread every 20 ms while a connection publishes audio.
public protocol AudioSource: Sendable {
    /// The next 20 ms of samples.
    func nextFrame() -> [Int16]
}

/// A synthetic camera: the moving test pattern with its frame counter drawn in
/// (``TestPatternSource``), so a receiver can read back which frame it decoded.
public final class TestPatternCamera: VideoSource {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    private let source: Mutex<TestPatternSource>

    /// Creates a camera.
    ///
    /// - Parameters:
    ///   - width: Frame width, at least 32.
    ///   - height: Frame height, at least 32.
    ///   - framesPerSecond: Frame rate.
    ///   - firstFrameNumber: The counter of the first frame.
    public init(width: Int = 320, height: Int = 240, framesPerSecond: Int = 15, firstFrameNumber: UInt32 = 0) {
        self.width = width
        self.height = height
        self.framesPerSecond = max(1, framesPerSecond)
        source = Mutex(TestPatternSource(width: width, height: height, firstFrameNumber: firstFrameNumber))
    }

    /// The next pattern frame; its counter is one more than the last.
    public func nextFrame() -> I420Frame {
        source.withLock { $0.nextFrame() }
    }
}

/// A synthetic microphone: a continuous sine tone.
public final class ToneMicrophone: AudioSource {
    private let source: Mutex<ToneSource>

    /// Creates a microphone.
    ///
    /// - Parameters:
    ///   - frequency: Tone frequency in Hz.
    ///   - amplitude: Peak amplitude, 0–1 of full scale.
    public init(frequency: Double = 440, amplitude: Double = 0.5) {
        source = Mutex(ToneSource(frequency: frequency, amplitude: amplitude, channels: 1))
    }

    /// The next 20 ms of tone.
    public func nextFrame() -> [Int16] {
        source.withLock { $0.nextFrame() }
    }
}
