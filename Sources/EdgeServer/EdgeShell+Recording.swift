import Edge
import Recording
import ShowroomWire
import ZeroMQ

// Recordings: the coordinators' orders in, frames to the recorder, finished files out as channel
// activities (numbered by the channel's owner and posted as signed webhooks like every event).

extension EdgeShell {
    /// `EDGE_RECORDINGS`: a coordinator's orders, whole. Returns how many publishers are recorded.
    func applyRecordings(_ request: RoomEdgeRecordingsRequest) throws(ShowroomError) -> Int {
        guard let recorder else { throw .unavailable("this edge records nothing (no recordings directory)") }
        let orders = try EdgeCodec.recordingOrders(request)
        carryOut(recorder.desk.setOrders(orders, from: request.coordinator, version: request.version, now: now), recorder)
        return recorder.desk.running.count
    }

    /// One frame the plane took, for the recording of its publisher if one is wanted.
    func record(_ frame: Multipart, header: WireMediaHeader, info: MediaFrameInfo, from session: SessionID, _ recorder: EdgeRecorder) {
        switch recorder.desk.frame(channel: info.channel, uid: info.publisherUID, forwarded: plane.isForwardLink(session), now: now) {
        case .skip:
            return
        case .record:
            break
        case .start(let orderID, let segmentSeconds):
            recorder.start(RecordingDesk.Key(channel: info.channel, uid: info.publisherUID), orderID: orderID,
                           segmentSeconds: segmentSeconds, unixNowMs: time.unixNowMs)
            // A file starts on a keyframe: ask for one now rather than wait for the next.
            if info.kind != .video || !info.isKeyframe { wantKeyframe(RecordingDesk.Key(channel: info.channel, uid: info.publisherUID)) }
        }
        recorder.record(frame, header: header, info: info)
    }

    /// A publisher that leaves or becomes audience ends its recording here (its file is finished).
    func recordingsSee(_ activity: ChannelActivity, _ recorder: EdgeRecorder) {
        guard activity.kind == .broadcasterLeft || activity.kind == .roleToAudience else { return }
        carryOut(recorder.desk.publisherLeft(channel: activity.channel, uid: activity.uid), recorder)
    }

    /// Carries out the desk's actions.
    func carryOut(_ actions: [RecordingDesk.Action], _ recorder: EdgeRecorder) {
        for action in actions {
            switch action {
            case .start(let key, let orderID, let segmentSeconds):
                recorder.start(key, orderID: orderID, segmentSeconds: segmentSeconds, unixNowMs: time.unixNowMs)
                wantKeyframe(key)
            case .stop(let key):
                recorder.stop(key)
            }
        }
    }

    /// What a recording told, back on the edge's loop: a keyframe wanted, a file finished (an
    /// activity for the channel's owner, whose event becomes the file's webhook), or a failure.
    func recordingEvent(_ key: RecordingWorker.Key, _ event: PublisherRecording.Event) {
        guard let recorder else { return }
        let deskKey = RecordingDesk.Key(channel: key.channel, uid: key.uid)
        switch event {
        case .wantKeyframe:
            guard recorder.desk.running[deskKey] != nil else { return }
            wantKeyframe(deskKey)
        case .finished(let file):
            hold(wire: recordingActivity(.recordingFile, key, orderID: file.recordingID, file: file))
        case .failed(let reason):
            let orderID = recorder.desk.running[deskKey]?.orderID
            recorder.desk.failed(deskKey)
            var activity = recordingActivity(.recordingFailed, key, orderID: orderID, file: nil)
            activity.recording.failure = String(reason.prefix(1024))
            hold(wire: activity)
        }
    }

    /// Asks `key`'s publisher for a video keyframe (through the relay for a stand-in).
    private func wantKeyframe(_ key: RecordingDesk.Key) {
        let track = TrackID(channel: key.channel, uid: key.uid, kind: .video)
        guard let publisher = plane.publisher(of: track) else { return }
        perform([.requestKeyframe(track, from: publisher)])
    }

    private func recordingActivity(_ type: RoomChannelEventType, _ key: RecordingWorker.Key, orderID: String?,
                                   file: RecordedFile?) -> RoomChannelActivity {
        var activity = RoomChannelActivity()
        activity.type = type
        activity.channel = key.channel
        activity.uid = key.uid
        activity.atMs = time.unixNowMs
        activity.recording.recordingID = orderID ?? ""
        if let file {
            activity.recording.path = file.path
            activity.recording.segment = UInt32(clamping: file.segment)
            activity.recording.startMs = file.startMs
            activity.recording.endMs = file.endMs
            activity.recording.durationMs = file.durationMs
            activity.recording.bytes = UInt64(clamping: file.bytes)
            activity.recording.codecs = file.codecs
            activity.recording.failure = String((file.failure ?? "").prefix(1024))
        }
        return activity
    }
}
