import Foundation
import ShowroomWire

/// Recordings (`/v1/channels/{channel}/recordings`, `/v1/recordings`): a `RECORDING` request to
/// the channel's owner coordinator each, which keeps the recording and tells every edge.
extension ServerAPIHandler {
    /// Asks the channel's owner to start, stop, get or list its recordings.
    func recordings(in channel: String, _ action: RoomRecordingRequest.OneOf_Action) async throws(ShowroomError) -> [RoomRecording] {
        var request = RoomRecordingRequest()
        request.channel = channel
        request.action = action
        return try await ask(.recording, request, face: .cluster, expecting: RoomRecordingResponse.self).recordings
    }

    /// The one recording a start, stop or get answers with.
    func recording(in channel: String, _ action: RoomRecordingRequest.OneOf_Action) async throws(ShowroomError) -> Components.Schemas.Recording {
        guard let recording = try await recordings(in: channel, action).first else {
            throw .internal("the coordinator answered a recording request with no recording")
        }
        return Self.recording(recording)
    }

    /// A recording as the API shows it.
    static func recording(_ recording: RoomRecording) -> Components.Schemas.Recording {
        .init(
            id: recording.id, channel: recording.channel, uids: recording.uids.map(Int64.init), startedMs: recording.startedMs,
            stoppedMs: recording.stoppedMs == 0 ? nil : recording.stoppedMs, running: recording.stoppedMs == 0,
            segmentSeconds: recording.segmentSeconds == 0 ? nil : Int32(clamping: recording.segmentSeconds),
            recordingUids: recording.recordingUids.map(Int64.init),
            files: recording.files.map { file in
                .init(recordingId: file.recordingID, path: file.path, segment: Int32(clamping: file.segment), startMs: file.startMs,
                      endMs: file.endMs, durationMs: file.durationMs, bytes: Int64(clamping: file.bytes),
                      codecs: file.codecs.compactMap(Components.Schemas.RecordedFile.CodecsPayloadPayload.init(rawValue:)),
                      failure: file.failure.isEmpty ? nil : file.failure, edge: file.edge)
            })
    }

    func listRecordings(_ input: Operations.ListRecordings.Input) async throws -> Operations.ListRecordings.Output {
        let all = try await recordings(in: input.path.channel, .list(true))
        return .ok(.init(body: .json(.init(recordings: all.map(Self.recording)))))
    }

    func startRecording(_ input: Operations.StartRecording.Input) async throws -> Operations.StartRecording.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the recording as JSON") }
        var start = RoomRecordingStart()
        start.uids = try (body.uids ?? []).map { v throws(ShowroomError) in try Self.uid(v, field: "uids") }
        guard Set(start.uids).count == start.uids.count else { throw ShowroomError.invalidArgument("uids names a uid twice; name each once") }
        if let seconds = body.segmentSeconds {
            guard (60...86_400).contains(seconds) else { throw ShowroomError.invalidArgument("segment_seconds must be 60 to 86400, not \(seconds)") }
            start.segmentSeconds = UInt32(seconds)
        }
        return .created(.init(body: .json(try await recording(in: input.path.channel, .start(start)))))
    }

    func getRecording(_ input: Operations.GetRecording.Input) async throws -> Operations.GetRecording.Output {
        .ok(.init(body: .json(try await recording(in: input.path.channel, .get(input.path.recordingId)))))
    }

    func stopRecording(_ input: Operations.StopRecording.Input) async throws -> Operations.StopRecording.Output {
        .ok(.init(body: .json(try await recording(in: input.path.channel, .stop(input.path.recordingId)))))
    }

    func listRecordingsInProgress(_ input: Operations.ListRecordingsInProgress.Input) async throws -> Operations.ListRecordingsInProgress.Output {
        let list = try await ask(.channelList, RoomListChannelsRequest(), face: .cluster, expecting: RoomListChannelsResponse.self)
        let all = list.channels.flatMap { status in status.recording.map { (status.name, $0, status.edge) } }
            .sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
        return .ok(.init(body: .json(.init(recordings: all.map { .init(channel: $0.0, uid: Int64($0.1), edge: $0.2) }))))
    }
}
