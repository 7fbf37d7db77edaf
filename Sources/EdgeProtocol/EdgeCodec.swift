#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShowroomWire
import SwiftProtobuf

/// Between the wire contract (`proto/showroom/edge/session.proto`, envelopes) and the plane's
/// values, in both directions: the edge decodes requests and encodes replies and events; a client
/// (the SDK, tests) does the opposite with the same functions. Every decoding failure is a
/// ``ShowroomError``: `MALFORMED_MESSAGE`, `UNKNOWN_KIND`, `UNKNOWN_TRACK`, `INVALID_ARGUMENT`.
public enum EdgeCodec {
    /// The message kind of a request kind (and of its response).
    ///
    /// - Parameter kind: A request kind.
    /// - Returns: Its `MessageKind`.
    public static func messageKind(of kind: EdgeRequestKind) -> WireMessageKind {
        switch kind {
        case .openSession: .edgeOpenSession
        case .closeSession: .edgeCloseSession
        case .heartbeat: .edgeHeartbeat
        case .join: .joinChannel
        case .leave: .leaveChannel
        case .updateOptions: .updateChannelOptions
        case .setRole: .setClientRole
        case .renewToken: .renewChannelToken
        case .subscribe: .subscribeTrack
        case .unsubscribe: .unsubscribeTrack
        case .muteRemote: .muteRemoteTrack
        case .enableVolumeIndication: .enableVolumeIndication
        case .sendStreamMessage: .sendStreamMessage
        case .preload: .preloadChannel
        }
    }

    /// The request kind of a message kind.
    ///
    /// - Parameter kind: A message kind.
    /// - Returns: The request kind, or `nil` if `kind` is not a client request to an edge.
    public static func requestKind(of kind: WireMessageKind) -> EdgeRequestKind? {
        EdgeRequestKind.allCases.first { messageKind(of: $0) == kind }
    }

    /// The `KEYFRAME_REQUEST` event for a track's publisher.
    ///
    /// - Parameter track: The track that needs a keyframe.
    /// - Returns: The one-way envelope.
    public static func keyframeRequest(for track: TrackID) throws(ShowroomError) -> WireEnvelope {
        var body = EdgeKeyframeRequest()
        body.channel = track.channel
        body.track = wire(track.kind)
        return try WireEnvelope(request: .keyframeRequest, id: 0, body: body)
    }

    /// The track a `KEYFRAME_REQUEST` event asks a keyframe for (client side).
    ///
    /// - Parameters:
    ///   - envelope: A `KEYFRAME_REQUEST` envelope.
    ///   - uid: The receiving publisher's uid in that channel.
    /// - Returns: The track.
    public static func keyframeRequest(from envelope: WireEnvelope, uid: UInt32) throws(ShowroomError) -> TrackID {
        guard envelope.kind == .keyframeRequest else { throw .unknownKind("expected KEYFRAME_REQUEST, got \(envelope.kind)") }
        let body = try envelope.decodeBody(EdgeKeyframeRequest.self)
        return TrackID(channel: body.channel, uid: uid, kind: try requiredTrackKind(body.track))
    }

    // MARK: - Enum conversions

    /// The track kind of a wire track kind; `nil` for one neither audio nor video.
    public static func trackKind(_ wire: WireTrackKind) -> TrackKind? {
        switch wire {
        case .audio: .audio
        case .video: .video
        default: nil
        }
    }

    static func requiredTrackKind(_ wire: WireTrackKind) throws(ShowroomError) -> TrackKind {
        guard let kind = trackKind(wire) else {
            throw .unknownTrack("track kind \(wire.rawValue) is neither audio nor video")
        }
        return kind
    }

    static func wire(_ kind: TrackKind) -> WireTrackKind {
        kind == .audio ? .audio : .video
    }

    static func role(_ wire: EdgeClientRole) -> ClientRole? {
        switch wire {
        case .broadcaster: .broadcaster
        case .audience: .audience
        default: nil
        }
    }

    static func wire(_ role: ClientRole) -> EdgeClientRole {
        role == .broadcaster ? .broadcaster : .audience
    }

    static func privilege(_ wire: EdgePrivilege) throws(ShowroomError) -> Privilege {
        switch wire {
        case .joinChannel: return .join
        case .publishAudio: return .publishAudio
        case .publishVideo: return .publishVideo
        case .publishData: return .publishData
        default: throw .malformed("unknown privilege \(wire.rawValue)")
        }
    }

    static func wire(_ privilege: Privilege) -> EdgePrivilege {
        switch privilege {
        case .join: .joinChannel
        case .publishAudio: .publishAudio
        case .publishVideo: .publishVideo
        case .publishData: .publishData
        }
    }

    static func offlineReason(_ wire: EdgeUserOfflineReason) -> UserOfflineReason {
        switch wire {
        case .quit: .quit
        case .becameAudience: .becameAudience
        case .forwardStopped: .forwardStopped
        // Dropped is the safe reading of a reason this build does not know.
        default: .dropped
        }
    }

    static func wire(_ reason: UserOfflineReason) -> EdgeUserOfflineReason {
        switch reason {
        case .quit: .quit
        case .dropped: .dropped
        case .becameAudience: .becameAudience
        case .forwardStopped: .forwardStopped
        }
    }

    static func videoState(_ wire: EdgeRemoteVideoState) throws(ShowroomError) -> RemoteVideoState {
        switch wire {
        case .stopped: return .stopped
        case .starting: return .starting
        case .decoding: return .decoding
        case .frozen: return .frozen
        default: throw .malformed("unknown remote video state \(wire.rawValue)")
        }
    }

    static func wire(_ state: RemoteVideoState) -> EdgeRemoteVideoState {
        switch state {
        case .stopped: .stopped
        case .starting: .starting
        case .decoding: .decoding
        case .frozen: .frozen
        }
    }

    static func videoStateReason(_ wire: EdgeRemoteVideoStateReason) throws(ShowroomError) -> RemoteVideoStateReason {
        switch wire {
        case .subscribed: return .subscribed
        case .unsubscribed: return .unsubscribed
        case .localMuted: return .localMuted
        case .localUnmuted: return .localUnmuted
        case .remoteMuted: return .remoteMuted
        case .remoteUnmuted: return .remoteUnmuted
        case .remoteOffline: return .remoteOffline
        case .networkCongestion: return .networkCongestion
        case .networkRecovery: return .networkRecovery
        default: throw .malformed("unknown remote video state reason \(wire.rawValue)")
        }
    }

    static func wire(_ reason: RemoteVideoStateReason) -> EdgeRemoteVideoStateReason {
        switch reason {
        case .subscribed: .subscribed
        case .unsubscribed: .unsubscribed
        case .localMuted: .localMuted
        case .localUnmuted: .localUnmuted
        case .remoteMuted: .remoteMuted
        case .remoteUnmuted: .remoteUnmuted
        case .remoteOffline: .remoteOffline
        case .networkCongestion: .networkCongestion
        case .networkRecovery: .networkRecovery
        }
    }

    // MARK: - Durations and envelopes

    /// Whole milliseconds, clamped to UInt32.
    static func milliseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        guard !ms.overflow else { return .max }
        return UInt32(clamping: ms.partialValue + attoseconds / 1_000_000_000_000_000)
    }

    /// A response envelope for a request identified by kind and id.
    static func response<Body: SwiftProtobuf.Message>(_ kind: WireMessageKind, _ requestID: UInt64, _ body: Body) throws(ShowroomError) -> WireEnvelope {
        try WireEnvelope(responseTo: requestHeader(kind, requestID), body: body)
    }

    static func requestHeader(_ kind: WireMessageKind, _ requestID: UInt64) -> WireEnvelope {
        var request = WireEnvelope()
        request.kind = kind
        request.requestID = requestID
        return request
    }
}
