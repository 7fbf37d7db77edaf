/// One speaker in a volume indication (``EngineEvent/volumeIndication(_:speakers:)``).
public struct SpeakerVolume: Sendable, Hashable {
    /// The speaker's uid.
    public var uid: UInt32
    /// 0 (silence) – 100, smoothed as asked in ``ShowroomEngine/enableAudioVolumeIndication(interval:smoothing:reportVAD:)``.
    public var volume: Int
    /// The speaker is talking (false unless voice activity was asked for).
    public var voiceActive: Bool

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - uid: The speaker's uid.
    ///   - volume: 0–100.
    ///   - voiceActive: Whether the speaker is talking.
    public init(uid: UInt32, volume: Int, voiceActive: Bool = false) {
        self.uid = uid
        self.volume = volume
        self.voiceActive = voiceActive
    }
}
