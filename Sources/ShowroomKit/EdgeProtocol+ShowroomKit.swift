internal import EdgeProtocol

// Between the SDK's public vocabulary and the edge protocol's: the app sees only the SDK's types,
// the wire only the protocol's.

extension ClientRole {
    init(_ role: EdgeProtocol.ClientRole) {
        switch role {
        case .broadcaster: self = .broadcaster
        case .audience: self = .audience
        }
    }

    var edgeRole: EdgeProtocol.ClientRole {
        switch self {
        case .broadcaster: .broadcaster
        case .audience: .audience
        }
    }
}

extension TrackKind {
    init(_ kind: EdgeProtocol.TrackKind) {
        switch kind {
        case .audio: self = .audio
        case .video: self = .video
        }
    }

    var edgeKind: EdgeProtocol.TrackKind {
        switch self {
        case .audio: .audio
        case .video: .video
        }
    }
}

extension Privilege {
    init(_ privilege: EdgeProtocol.Privilege) {
        switch privilege {
        case .join: self = .join
        case .publishAudio: self = .publishAudio
        case .publishVideo: self = .publishVideo
        case .publishData: self = .publishData
        }
    }
}

extension RemoteVideoState {
    init(_ state: EdgeProtocol.RemoteVideoState) {
        switch state {
        case .stopped: self = .stopped
        case .starting: self = .starting
        case .decoding: self = .decoding
        case .frozen: self = .frozen
        }
    }
}

extension RemoteVideoStateReason {
    init(_ reason: EdgeProtocol.RemoteVideoStateReason) {
        switch reason {
        case .subscribed: self = .subscribed
        case .unsubscribed: self = .unsubscribed
        case .localMuted: self = .localMuted
        case .localUnmuted: self = .localUnmuted
        case .remoteMuted: self = .remoteMuted
        case .remoteUnmuted: self = .remoteUnmuted
        case .remoteOffline: self = .remoteOffline
        case .networkCongestion: self = .networkCongestion
        case .networkRecovery: self = .networkRecovery
        }
    }
}

extension UserOfflineReason {
    init(_ reason: EdgeProtocol.UserOfflineReason) {
        switch reason {
        case .quit: self = .quit
        case .dropped: self = .dropped
        case .becameAudience: self = .becameAudience
        case .forwardStopped: self = .forwardStopped
        }
    }
}

extension SpeakerVolume {
    init(_ speaker: EdgeProtocol.SpeakerVolume) {
        self.init(uid: speaker.uid, volume: speaker.volume, voiceActive: speaker.voiceActive)
    }
}

extension ChannelMediaOptions {
    /// The options as a partial update on the wire.
    var edgeUpdate: MediaOptionsUpdate {
        MediaOptionsUpdate(
            role: role?.edgeRole, publishAudio: publishAudio, publishVideo: publishVideo, publishData: publishData,
            autoSubscribeAudio: autoSubscribeAudio, autoSubscribeVideo: autoSubscribeVideo)
    }

    /// The options a join with these options ends up with on the edge.
    var joinOptions: MediaOptions {
        MediaOptions.defaults(for: joinRole.edgeRole).applying(edgeUpdate)
    }
}
