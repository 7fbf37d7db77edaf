// Pure: no I/O, no clock, no randomness of its own.
import ShowroomWire

extension CoordinatorNode {
    /// A `RECORDING` request served at the channel's owner: starts, stops, gets or lists the
    /// channel's recordings. Returns the answer (a running recording with the uids the edges
    /// record now) and the recording a start or stop changed: the edges are sent the orders at
    /// once, and every other coordinator is to hold it before the answer, so that the channel's
    /// next owner goes on with it. A start's id is drawn from `generator`.
    public mutating func serveRecording(_ request: RoomRecordingRequest, nowMs: Int64, using generator: inout some RandomNumberGenerator)
        throws(ShowroomError) -> (answer: RoomRecordingResponse, changed: RoomRecording?) {
        var answer = RoomRecordingResponse()
        var changed: RoomRecording?
        switch request.action {
        case .start(let start):
            let id = "rec-" + String(UInt64.random(in: 0 ... .max, using: &generator) | 1 << 60, radix: 16)
            changed = try records.recordings.start(channel: request.channel, start, id: id, nowMs: nowMs)
        case .stop(let id):
            changed = try records.recordings.stop(channel: request.channel, id: id, nowMs: nowMs)
        case .get(let id):
            answer.recordings = [try records.recordings.get(channel: request.channel, id: id)]
        case .list:
            answer.recordings = records.recordings.list(channel: request.channel)
        case nil:
            throw .invalidArgument("a RECORDING request starts, stops, gets or lists recordings; it names none of these")
        }
        if let changed { answer.recordings = [changed] }
        let recording = records.directory.recordingUIDs(of: request.channel)
        for index in answer.recordings.indices where answer.recordings[index].stoppedMs == 0 {
            answer.recordings[index].recordingUids = recording
        }
        return (answer, changed)
    }
}
