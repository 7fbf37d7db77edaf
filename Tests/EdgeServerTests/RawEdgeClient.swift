import Edge
import Foundation
import ShowroomAuth
import ShowroomWire
import XCTest
import ZeroMQ

/// A bare client session for testing the edge shell: one DEALER, driven synchronously from the
/// test's thread, speaking the wire contract through `EdgeCodec`.
final class RawEdgeClient {
    let socket: Socket
    private var nextRequestID: UInt64 = 1
    /// Events received while waiting for something else, oldest first.
    private(set) var events: [EdgeEvent] = []
    /// Media frames received, oldest first: header and payload.
    private(set) var frames: [(header: WireMediaHeader, payload: [UInt8])] = []
    private let buffer = Multipart()

    init(endpoint: String, context: Context, receiveHighWaterMark: Int32 = 1000) throws {
        socket = try Socket(.dealer, context: context)
        try socket.setHighWaterMarks(send: 1000, receive: receiveHighWaterMark)
        try socket.connect(endpoint)
    }

    deinit { socket.close() }

    /// Sends a request and waits for its reply; events and frames arriving meanwhile are kept.
    func request(_ request: EdgeRequest, timeout: Duration = .seconds(5)) throws -> EdgeReply {
        let id = nextRequestID
        nextRequestID += 1
        try send(EdgeCodec.envelope(request: request, id: id))
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let envelope = try receiveOne(until: deadline) else { continue }
            if envelope.isResponse, envelope.requestID == id { return try EdgeCodec.reply(from: envelope) }
        }
        throw ShowroomError.deadlineExceeded("no reply to \(request.kind) within \(timeout)")
    }

    /// Opens the session.
    func open(clientID: String = UUID().uuidString) throws {
        let reply = try request(.openSession(clientID: clientID, sdkVersion: "test"))
        if let failure = reply.failure { throw failure }
    }

    /// Joins and returns the reply.
    func join(_ channel: String, uid: UInt32, token: String, role: ClientRole) throws -> EdgeReply {
        try request(.join(channel: channel, uid: uid, token: token, role: role, options: .defaults(for: role)))
    }

    /// Publishes one media frame.
    func publish(channel: String, uid: UInt32, track: WireTrackKind, sequence: UInt32, keyframe: Bool, payload: [UInt8]) throws {
        var header = WireMediaHeader()
        header.channel = channel
        header.publisherUid = uid
        header.track = track
        header.codec = track == .audio ? .opus : .vp8
        header.sequence = sequence
        header.keyframe = keyframe
        header.audioLevel = track == .audio ? 80 : 0
        header.payloadSize = UInt32(payload.count)
        var envelope = WireEnvelope()
        envelope.kind = .mediaFrame
        envelope.body = try header.serializedData()
        XCTAssertEqual(try socket.send(frames: [try envelope.serializedBytes(), payload]), .sent)
    }

    /// Waits for an event matching `match`, looking first at those already received.
    @discardableResult
    func waitForEvent(timeout: Duration = .seconds(5), _ what: String, _ match: (EdgeEvent) -> Bool) throws -> EdgeEvent {
        let deadline = ContinuousClock.now + timeout
        var seen = 0
        while true {
            if let index = events[seen...].firstIndex(where: match) {
                return events.remove(at: index)
            }
            seen = events.count
            guard ContinuousClock.now < deadline else { break }
            _ = try receiveOne(until: deadline)
        }
        throw ShowroomError.deadlineExceeded("no \(what) event within \(timeout); got \(events)")
    }

    /// Waits until `count` frames have arrived in all.
    func waitForFrames(_ count: Int, timeout: Duration = .seconds(5)) throws {
        let deadline = ContinuousClock.now + timeout
        while frames.count < count, ContinuousClock.now < deadline {
            _ = try receiveOne(until: deadline)
        }
        if frames.count < count {
            throw ShowroomError.deadlineExceeded("\(frames.count) of \(count) frames within \(timeout)")
        }
    }

    /// Receives whatever arrives within `duration` (to check that nothing does).
    func drain(for duration: Duration) throws {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline { _ = try receiveOne(until: deadline) }
    }

    func send(_ envelope: WireEnvelope) throws {
        XCTAssertEqual(try socket.send(frames: [try envelope.serializedBytes()]), .sent)
    }

    /// Receives one message; events and frames are filed, a response is returned.
    private func receiveOne(until deadline: ContinuousClock.Instant) throws -> WireEnvelope? {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero, try socket.poll(.readable, timeout: left).contains(.readable),
            try socket.receive(into: buffer)
        else { return nil }
        let envelope = try buffer.withBytes(of: 0) { (bytes) throws(ShowroomError) in try WireEnvelope.decode(frame: Data(bytes)) }
        if envelope.isResponse { return envelope }
        if envelope.kind == .mediaFrame {
            frames.append((try envelope.decodeBody(WireMediaHeader.self), buffer.count > 1 ? buffer.bytes(of: 1) : []))
        } else if envelope.kind == .keyframeRequest {
            events.append(.error(.internal("keyframe request"), channel: "", track: .video))
        } else {
            events.append(try EdgeCodec.event(from: envelope))
        }
        return nil
    }
}

/// Tokens for the test app.
enum TestApp {
    static let appID = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    static func token(
        channel: String, uid: UInt32, role: RTCRole = .publisher, expire: UInt32 = 600,
        appID: String = appID, certificate: String = certificate, issuedAgo: UInt32 = 0
    ) throws -> String {
        let now = UInt32(Date().timeIntervalSince1970)
        return try RTCTokenBuilder.buildToken(
            appID: appID, appCertificate: certificate, channelName: channel, uid: uid, role: role,
            tokenExpire: expire, issueTs: now - issuedAgo)
    }
}
