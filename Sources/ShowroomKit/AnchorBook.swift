/// How far a viewer's engine is into a live room's channel (VideoLoaderAPI's `AnchorState`, with
/// its numbers).
public enum AnchorState: Int, Sendable, Hashable, Comparable {
    /// Not in the channel.
    case idle = 0
    /// In the channel as audience, subscribed to nothing: the join is paid, the media is not.
    case prejoined = 1
    /// The host's video is subscribed (rendered), its audio is not.
    case joinedWithVideo = 2
    /// The host's video and audio are subscribed.
    case joinedWithAudioVideo = 3

    public static func < (lhs: AnchorState, rhs: AnchorState) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A live room's host as the video loader knows it: its channel, its uid, and the token this
/// viewer joins the channel with (from the app's business server).
public struct AnchorInfo: Sendable, Hashable {
    /// The room's channel.
    public var channel: String
    /// The host's uid.
    public var uid: UInt32
    /// This viewer's token for the channel.
    public var token: String

    /// A room's host.
    public init(channel: String, uid: UInt32, token: String) {
        self.channel = channel
        self.uid = uid
        self.token = token
    }
}

/// The viewer's channels as a pure state machine: each channel's state is asked for by tags (a
/// room page, a list card, a PK view …); the channel's effective state is the highest any tag
/// asks for, and the channel is left when no tag holds it any more (VideoLoaderAPI's
/// `exConnectionDeps`). Changes return what the shell must do to the engine, in order.
package struct AnchorBook: Sendable, Equatable {
    /// What the shell does to the engine.
    package enum Directive: Sendable, Equatable {
        /// Join the channel as audience, subscribed to nothing.
        case join(AnchorInfo)
        /// Subscribe to (or drop) the host's video, rendering it.
        case video(channel: String, uid: UInt32, on: Bool)
        /// Subscribe to (or drop) the host's audio.
        case audio(channel: String, uid: UInt32, on: Bool)
        /// Leave the channel.
        case leave(channel: String)
    }

    /// The viewer's own uid: its own channel is never joined as audience.
    package let localUID: UInt32
    /// A held channel: its anchor and the state each tag asks for.
    package struct Hold: Sendable, Equatable {
        /// The room's host (with the latest token given).
        package var anchor: AnchorInfo
        /// The state each tag asks for (none idle).
        package var tags: [String: AnchorState]
    }

    /// The held channels.
    package private(set) var channels: [String: Hold] = [:]

    /// No channel held.
    package init(localUID: UInt32) {
        self.localUID = localUID
    }

    /// The channel's effective state.
    package func state(of channel: String) -> AnchorState {
        channels[channel]?.tags.values.max() ?? .idle
    }

    /// The channels held (not idle).
    package var heldChannels: [String] { channels.keys.sorted() }

    /// `tag` asks for `state` of `anchor`'s channel (idle drops the tag's hold). Nothing happens for
    /// the viewer's own room.
    package mutating func set(_ state: AnchorState, for anchor: AnchorInfo, tag: String) -> [Directive] {
        guard anchor.uid != localUID, !anchor.channel.isEmpty else { return [] }
        let before = self.state(of: anchor.channel)
        var entry = channels[anchor.channel] ?? Hold(anchor: anchor, tags: [:])
        // A newer token (or host) replaces the one held, for the next join.
        entry.anchor = anchor
        entry.tags[tag] = state == .idle ? nil : state
        channels[anchor.channel] = entry.tags.isEmpty ? nil : entry
        return Self.transition(entry.anchor, from: before, to: self.state(of: anchor.channel))
    }

    /// Every tag's hold on every channel ends: every channel is left.
    package mutating func clean() -> [Directive] {
        let held = channels.values.sorted { $0.anchor.channel < $1.anchor.channel }
        channels = [:]
        return held.flatMap { Self.transition($0.anchor, from: $0.tags.values.max() ?? .idle, to: .idle) }
    }

    /// What takes a channel from one effective state to another.
    static func transition(_ anchor: AnchorInfo, from before: AnchorState, to after: AnchorState) -> [Directive] {
        guard before != after else { return [] }
        let channel = anchor.channel, uid = anchor.uid
        var directives: [Directive] = []
        if before == .idle { directives.append(.join(anchor)) }
        let videoBefore = before >= .joinedWithVideo, videoAfter = after >= .joinedWithVideo
        let audioBefore = before == .joinedWithAudioVideo, audioAfter = after == .joinedWithAudioVideo
        if videoAfter != videoBefore { directives.append(.video(channel: channel, uid: uid, on: videoAfter)) }
        if audioAfter != audioBefore { directives.append(.audio(channel: channel, uid: uid, on: audioAfter)) }
        if after == .idle { directives = [.leave(channel: channel)] }
        return directives
    }
}
