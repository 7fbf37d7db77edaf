public import MediaCodecs
import Synchronization

/// What a ``DecodingVideoSink`` has seen.
public struct DecodedVideoStatistics: Sendable, Hashable {
    /// Frames received, decoded or not.
    public var received = ReceivedFrameStatistics()
    /// Frames that decoded to a picture.
    public var framesDecoded = 0
    /// Frames the decoder refused (the sink then waits for a keyframe).
    public var decodeErrors = 0
    /// Frames skipped while waiting for a keyframe.
    public var framesSkipped = 0
    /// Size of the last picture.
    public var width = 0
    /// Height of the last picture.
    public var height = 0
    /// Test-pattern counter of the first picture that had one.
    public var firstFrameCounter: UInt32?
    /// Test-pattern counter of the last picture that had one.
    public var lastFrameCounter: UInt32?
    /// Pictures whose counter did not increase over the previous one (out of order, repeated).
    public var counterRegressions = 0
    /// Counters missing between consecutive pictures.
    public var counterGaps = 0
    /// Pictures with a readable counter.
    public var countedFrames = 0
}

/// A video sink that decodes VP8 on the engine's loop thread and checks what it decodes: the
/// test pattern's frame counter (``TestPatternSource/readFrameCounter(from:)``) must increase.
///
/// Decoding costs real CPU on the loop (a few milliseconds per 320×240 frame); use small
/// pictures, or a sink of your own that does not decode where only delivery matters.
public final class DecodingVideoSink: RemoteVideoSink {
    private struct State {
        var decoder: VideoDecoder?
        var needsKeyframe = true
        var statistics = DecodedVideoStatistics()
        var readCounters: Bool
    }

    private let state: Mutex<State>
    private let onPicture: (@Sendable (I420Frame) -> Void)?

    /// Creates a sink.
    ///
    /// - Parameters:
    ///   - readFrameCounters: Read the test pattern's counter from each picture.
    ///   - onPicture: Called with each decoded picture, on the loop thread.
    public init(readFrameCounters: Bool = true, onPicture: (@Sendable (I420Frame) -> Void)? = nil) {
        state = Mutex(State(decoder: try? VideoDecoder(codec: .vp8), readCounters: readFrameCounters))
        self.onPicture = onPicture
    }

    /// What it has decoded so far.
    public var statistics: DecodedVideoStatistics { state.withLock { $0.statistics } }

    /// Decodes the frame; after a failure it skips to the next keyframe.
    public func consume(_ frame: RemoteMediaFrame) -> VideoSinkOutcome {
        let (outcome, picture): (VideoSinkOutcome, I420Frame?) = state.withLock { state in
            state.statistics.received.record(frame)
            if state.needsKeyframe && !frame.isKeyframe {
                state.statistics.framesSkipped += 1
                return (.failed, nil)
            }
            guard let decoder = state.decoder, frame.payload.count > 0 else {
                state.statistics.decodeErrors += 1
                return (.failed, nil)
            }
            let picture: I420Frame?
            do {
                picture = try decoder.decode([UInt8](frame.payload))
            } catch {
                state.statistics.decodeErrors += 1
                state.needsKeyframe = true
                return (.failed, nil)
            }
            state.needsKeyframe = false
            guard let picture else { return (.received, nil) }
            state.statistics.framesDecoded += 1
            state.statistics.width = picture.width
            state.statistics.height = picture.height
            if state.readCounters, let counter = TestPatternSource.readFrameCounter(from: picture) {
                state.statistics.countedFrames += 1
                if state.statistics.firstFrameCounter == nil { state.statistics.firstFrameCounter = counter }
                if let last = state.statistics.lastFrameCounter {
                    if counter <= last {
                        state.statistics.counterRegressions += 1
                    } else {
                        state.statistics.counterGaps += Int(counter - last - 1)
                    }
                }
                state.statistics.lastFrameCounter = counter
            }
            return (.decoded(width: picture.width, height: picture.height), picture)
        }
        if let picture, let onPicture { onPicture(picture) }
        return outcome
    }
}

/// What a ``DecodingAudioSink`` has seen.
public struct DecodedAudioStatistics: Sendable, Hashable {
    /// Frames received.
    public var received = ReceivedFrameStatistics()
    /// Frames decoded to 20 ms of PCM.
    public var framesDecoded = 0
    /// Frames the decoder refused.
    public var decodeErrors = 0
    /// Level (0–100) of the last decoded frame, measured on the decoded PCM.
    public var lastLevel = 0
    /// Level the publisher reported for the last frame.
    public var lastReportedLevel = 0
}

/// An audio sink that decodes Opus on the engine's loop thread and measures the decoded level.
public final class DecodingAudioSink: RemoteAudioSink {
    private struct State {
        var decoder: OpusDecoder?
        var statistics = DecodedAudioStatistics()
    }

    private let state: Mutex<State>

    /// Creates a sink (48 kHz mono).
    public init() {
        state = Mutex(State(decoder: try? OpusDecoder(channels: 1)))
    }

    /// What it has decoded so far.
    public var statistics: DecodedAudioStatistics { state.withLock { $0.statistics } }

    /// Decodes the frame.
    public func consume(_ frame: RemoteMediaFrame) {
        state.withLock { state in
            state.statistics.received.record(frame)
            state.statistics.lastReportedLevel = frame.audioLevel
            guard let decoder = state.decoder, let pcm = try? decoder.decode([UInt8](frame.payload)) else {
                state.statistics.decodeErrors += 1
                return
            }
            state.statistics.framesDecoded += 1
            state.statistics.lastLevel = AudioLevel(pcm: pcm).level
        }
    }
}
