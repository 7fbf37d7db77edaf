import Foundation
import ShowroomWire

/// Agora Cloud Recording's acquire, start, query and stop (individual mode), each a thin mapping
/// onto the native recordings: the resource id names the channel (its name in hex), the sid is the
/// recording's id.
extension ServerAPIHandler {
    typealias AgoraStatus = Components.Schemas.AgoraRecordingStatus
    typealias AgoraFile = AgoraStatus.ServerResponsePayload.FileListPayloadPayload

    /// The channel a resource id names; `RECORDING_NOT_FOUND` for one acquire never gave.
    static func channel(ofResource resourceID: String) throws(ShowroomError) -> String {
        let unknown = ShowroomError(.recordingNotFound, "resourceid \(resourceID.prefix(40)) is not one acquire gave; acquire one for the channel")
        let digits = Array(resourceID.utf8)
        guard digits.count % 2 == 0, digits.count <= 128 else { throw unknown }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { throw unknown }
            bytes.append(byte)
        }
        guard let channel = String(validating: bytes, as: UTF8.self), Names.isValidChannel(channel) else { throw unknown }
        return channel
    }

    /// Checks the app id and that the body's cname is the resource's channel.
    private func agoraChannel(appID: String, resourceID: String, cname: String?) throws -> String {
        try checkAppID(appID)
        // The document admits individual mode only; the generated code refuses the others.
        let channel = try Self.channel(ofResource: resourceID)
        if let cname, cname != channel {
            throw ShowroomError(.recordingNotFound, "resourceid \(resourceID.prefix(40)) was not acquired for channel \(cname.prefix(64)); acquire one for it")
        }
        return channel
    }

    /// A recording as Agora's query and stop answer it.
    private static func agoraStatus(_ recording: Components.Schemas.Recording, uid: String, resourceID: String, stopped: Bool) -> AgoraStatus {
        let files = recording.files.filter { !$0.path.isEmpty }.map { file in
            let video = file.codecs.contains(.vp8), audio = file.codecs.contains(.opus)
            return AgoraFile(fileName: file.path, trackType: video && audio ? .audioAndVideo : video ? .video : .audio,
                             uid: String(file.path.split(separator: "/").dropLast().last ?? ""), mixedAllUser: false,
                             isPlayable: file.failure == nil && file.durationMs > 0, sliceStartTime: file.startMs)
        }
        return AgoraStatus(cname: recording.channel, uid: uid, resourceId: resourceID, sid: recording.id, serverResponse: .init(
            status: recording.running ? 5 : 7, fileListMode: .json, uploadingStatus: stopped ? .uploaded : nil, fileList: files))
    }

    func agoraRecordingAcquire(_ input: Operations.AgoraRecordingAcquire.Input) async throws -> Operations.AgoraRecordingAcquire.Output {
        try checkAppID(input.path.appid)
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the request as JSON") }
        try Names.validateChannel(body.cname)
        _ = try Self.uid(Int64(body.uid) ?? 0, field: "uid")
        let resourceID = body.cname.utf8.map { String(format: "%02x", $0) }.joined()
        return .ok(.init(body: .json(.init(cname: body.cname, uid: body.uid, resourceId: resourceID))))
    }

    func agoraRecordingStart(_ input: Operations.AgoraRecordingStart.Input) async throws -> Operations.AgoraRecordingStart.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the request as JSON") }
        let channel = try agoraChannel(appID: input.path.appid, resourceID: input.path.resourceid, cname: body.cname)
        _ = try Self.uid(Int64(body.uid) ?? 0, field: "uid")
        let config = body.clientRequest.recordingConfig ?? nil
        let named = (config?.subscribeVideoUids ?? []) + (config?.subscribeAudioUids ?? [])
        var start = RoomRecordingStart()
        if !named.contains("#allstream#") {
            start.uids = Array(Set(try named.map { text throws(ShowroomError) in try Self.uid(Int64(text) ?? 0, field: "subscribe uids") })).sorted()
        }
        let recording = try await recording(in: channel, .start(start))
        return .ok(.init(body: .json(.init(cname: channel, uid: body.uid, resourceId: input.path.resourceid, sid: recording.id))))
    }

    func agoraRecordingQuery(_ input: Operations.AgoraRecordingQuery.Input) async throws -> Operations.AgoraRecordingQuery.Output {
        let channel = try agoraChannel(appID: input.path.appid, resourceID: input.path.resourceid, cname: nil)
        let recording = try await recording(in: channel, .get(input.path.sid))
        return .ok(.init(body: .json(Self.agoraStatus(recording, uid: "", resourceID: input.path.resourceid, stopped: false))))
    }

    func agoraRecordingStop(_ input: Operations.AgoraRecordingStop.Input) async throws -> Operations.AgoraRecordingStop.Output {
        guard case .json(let body) = input.body else { throw ShowroomError.invalidArgument("send the request as JSON") }
        let channel = try agoraChannel(appID: input.path.appid, resourceID: input.path.resourceid, cname: body.cname)
        _ = try Self.uid(Int64(body.uid) ?? 0, field: "uid")
        let recording = try await recording(in: channel, .stop(input.path.sid))
        return .ok(.init(body: .json(Self.agoraStatus(recording, uid: body.uid, resourceID: input.path.resourceid, stopped: true))))
    }
}
