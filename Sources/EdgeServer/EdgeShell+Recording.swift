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
            let key = RecordingDesk.Key(channel: info.channel, uid: info.publisherUID)
            recorder.start(key, orderID: orderID, segmentSeconds: segmentSeconds, unixNowMs: time.unixNowMs)
            if RecordingDesk.startAsksKeyframe(at: info) { wantKeyframe(key) }
        }
        recorder.record(frame, header: header, info: info)
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
            hold(wire: RecordingActivity.finished(key, file, atMs: time.unixNowMs))
        case .failed(let reason):
            hold(wire: RecordingActivity.failed(key, orderID: recorder.desk.failed(deskKey), reason: reason, atMs: time.unixNowMs))
        }
    }

    /// Asks `key`'s publisher for a video keyframe (through the relay for a stand-in).
    private func wantKeyframe(_ key: RecordingDesk.Key) {
        let track = TrackID(channel: key.channel, uid: key.uid, kind: .video)
        guard let publisher = plane.publisher(of: track) else { return }
        perform([.requestKeyframe(track, from: publisher)])
    }
}
