/// One speaker in a volume indication.
public struct SpeakerVolume: Sendable, Hashable {
    /// The speaker's uid.
    public var uid: UInt32
    /// 0 (silence) – 100, smoothed as the listener asked.
    public var volume: Int
    /// The speaker's level is at or above `EdgeSettings.speechLevel` (false unless the listener
    /// asked for voice activity).
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
