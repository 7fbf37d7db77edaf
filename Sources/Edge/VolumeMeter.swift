/// The audio levels of one channel's publishers, from their frames' headers, and the volume
/// reports built from them: per listener and interval, the loudest speakers.
///
/// Each publisher's last ``historyLength`` levels are kept with their arrival times (1.28 s of
/// 20 ms Opus frames), so any listener's interval can be served from one shared history: a
/// speaker's volume over an interval is its peak level within it (what the seeds' SDKs report).
/// Each listener then smooths over its own reports (``VolumeIndicationConfig/smoothing``).
public struct VolumeMeter: Sendable {
    /// Levels kept per publisher.
    public static let historyLength = 64

    struct Sample: Sendable {
        var time: Duration
        var level: UInt8
    }

    /// A ring of recent samples.
    struct History: Sendable {
        var samples = ContiguousArray<Sample>()
        var next = 0

        mutating func append(_ sample: Sample) {
            if samples.count < VolumeMeter.historyLength {
                samples.append(sample)
            } else {
                samples[next] = sample
                next = (next + 1) % VolumeMeter.historyLength
            }
        }

        func peak(since start: Duration) -> Int? {
            var peak: Int? = nil
            for sample in samples where sample.time > start {
                peak = max(peak ?? 0, Int(sample.level))
            }
            return peak
        }
    }

    private var speakers: [UInt32: History] = [:]

    /// Creates an empty meter.
    public init() {}

    /// The uids with a recorded level, sorted.
    public var uids: [UInt32] { speakers.keys.sorted() }

    /// Records the level of one audio frame.
    ///
    /// - Parameters:
    ///   - uid: The publisher.
    ///   - level: 0–100.
    ///   - now: The frame's arrival time.
    public mutating func record(uid: UInt32, level: UInt8, at now: Duration) {
        speakers[uid, default: History()].append(Sample(time: now, level: level))
    }

    /// Forgets a publisher (its audio track stopped).
    ///
    /// - Parameter uid: The publisher.
    public mutating func remove(uid: UInt32) {
        speakers[uid] = nil
    }

    /// A publisher's peak level over the frames that arrived after `start`.
    ///
    /// - Parameters:
    ///   - uid: The publisher.
    ///   - start: Beginning of the window (exclusive).
    /// - Returns: The peak, or `nil` if no frame arrived in the window.
    public func peak(of uid: UInt32, since start: Duration) -> Int? {
        speakers[uid]?.peak(since: start)
    }

    /// One listener's report: the loudest speakers over the last interval, smoothed with the
    /// listener's previous reports.
    ///
    /// - Parameters:
    ///   - now: The current clock value.
    ///   - config: The listener's settings (interval, smoothing, VAD).
    ///   - limit: Most speakers reported.
    ///   - speechLevel: Level from which a speaker counts as talking.
    ///   - memory: The listener's previous smoothed volumes by uid, updated.
    /// - Returns: The speakers with a volume above 0, loudest first (ties by uid).
    public func report(
        now: Duration,
        config: VolumeIndicationConfig,
        limit: Int,
        speechLevel: Int,
        memory: inout [UInt32: Double]
    ) -> [SpeakerVolume] {
        let smoothing = Double(max(0, config.smoothing))
        var result: [SpeakerVolume] = []
        var updated: [UInt32: Double] = [:]
        for (uid, history) in speakers {
            let raw = history.peak(since: now - config.interval) ?? 0
            let smoothed = ((memory[uid] ?? 0) * smoothing + Double(raw)) / (smoothing + 1)
            updated[uid] = smoothed
            let volume = Int(smoothed.rounded())
            if volume > 0 {
                result.append(SpeakerVolume(uid: uid, volume: volume, voiceActive: config.reportVAD && raw >= speechLevel))
            }
        }
        // Speakers no longer publishing are forgotten with `updated` replacing the memory.
        memory = updated
        result.sort { ($0.volume, $1.uid) > ($1.volume, $0.uid) }
        if result.count > limit { result.removeSubrange(limit...) }
        return result
    }
}
