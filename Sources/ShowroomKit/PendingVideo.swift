/// The frames of a remote video track since its last keyframe, kept while the app has not set a
/// sink for it yet (the seeds' apps call `setupRemoteVideo` after `userJoined`, when the edge's
/// cached GOP has already arrived): a sink set late is handed them at once and decodes from the
/// keyframe instead of waiting for the publisher's next one. Bounded like the edge's GOP cache; a
/// GOP over the bounds is dropped whole and the next keyframe starts a new one.
struct PendingVideo {
    /// One kept frame: its header fields and a copy of its payload.
    struct Frame {
        var uid: UInt32
        var sequence: UInt32
        var captureTimeMicroseconds: UInt64
        var sendTimeMicroseconds: UInt64
        var receiveTimeMicroseconds: UInt64
        var isKeyframe: Bool
        var width: Int
        var height: Int
        var payload: [UInt8]
    }

    /// The most frames kept per track.
    static let maxFrames = 300
    /// The most payload bytes kept per track.
    static let maxBytes = 4 << 20

    private var gops: [UInt32: (frames: [Frame], bytes: Int)] = [:]

    /// Keeps `frame` (of a track without a sink): a keyframe starts the track's GOP afresh, a delta
    /// frame joins the GOP it belongs to, and is dropped when no keyframe came since.
    mutating func keep(_ frame: RemoteMediaFrame) {
        if frame.isKeyframe {
            gops[frame.uid] = ([], 0)
        }
        guard var gop = gops[frame.uid] else { return }
        gop.frames.append(Frame(
            uid: frame.uid, sequence: frame.sequence, captureTimeMicroseconds: frame.captureTimeMicroseconds,
            sendTimeMicroseconds: frame.sendTimeMicroseconds, receiveTimeMicroseconds: frame.receiveTimeMicroseconds,
            isKeyframe: frame.isKeyframe, width: frame.width, height: frame.height, payload: Array(frame.payload)))
        gop.bytes += frame.payload.count
        gops[frame.uid] = gop.frames.count > Self.maxFrames || gop.bytes > Self.maxBytes ? nil : gop
    }

    /// The kept frames of `uid`'s track, oldest (the keyframe) first, taken out.
    mutating func take(_ uid: UInt32) -> [Frame] {
        gops.removeValue(forKey: uid)?.frames ?? []
    }

    /// Forgets `uid`'s track (it went away).
    mutating func forget(_ uid: UInt32) {
        gops[uid] = nil
    }
}
