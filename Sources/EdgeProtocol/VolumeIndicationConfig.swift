/// A session's volume indication settings (`enableAudioVolumeIndication` /
/// `enableAudioPropertiesReport`): reports of the loudest speakers of each of its channels.
public struct VolumeIndicationConfig: Sendable, Hashable {
    /// Report period; at least `EdgeSettings.minVolumeInterval` (100 ms).
    public var interval: Duration
    /// 0 (none) – 10 (heaviest): each reported volume is
    /// `(previous × smoothing + current) / (smoothing + 1)`.
    public var smoothing: Int
    /// Report voice activity (``SpeakerVolume/voiceActive``).
    public var reportVAD: Bool

    /// Creates settings.
    ///
    /// - Parameters:
    ///   - interval: Report period, at least 100 ms.
    ///   - smoothing: 0–10; 3 is a good default.
    ///   - reportVAD: Report voice activity.
    public init(interval: Duration, smoothing: Int = 3, reportVAD: Bool = false) {
        self.interval = interval
        self.smoothing = smoothing
        self.reportVAD = reportVAD
    }
}
