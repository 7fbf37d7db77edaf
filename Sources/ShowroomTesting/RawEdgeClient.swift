import Edge
import Foundation
import ShowroomWire
import ZeroMQ

/// A bare client session for tests: one DEALER, driven synchronously from the thread that made
/// it, speaking the client–edge contract through `EdgeCodec` with none of the SDK's behaviour (it
/// reads only when asked, so it can play a subscriber that stops reading).
public final class RawEdgeClient {
    /// The DEALER, for sending odd bytes.
    public let socket: Socket
    private var nextRequestID: UInt64 = 1
    /// Events received while waiting for something else, oldest first.
    public private(set) var events: [EdgeEvent] = []
    /// Media frames received, oldest first: header and payload.
    public private(set) var frames: [(header: WireMediaHeader, payload: [UInt8])] = []
    /// KEYFRAME_REQUEST events received (a publisher's concern).
    public private(set) var keyframeRequests = 0
    private let buffer = Multipart()

    /// Connects to an edge's client endpoint. A small `receiveHighWaterMark` and
    /// `receiveBufferBytes` make a client that stops reading back up to the edge quickly.
    public init(endpoint: String, context: Context, receiveHighWaterMark: Int32 = 1000, receiveBufferBytes: Int32? = nil) throws {
        socket = try Socket(.dealer, context: context)
        try socket.setHighWaterMarks(send: 1000, receive: receiveHighWaterMark)
        if let receiveBufferBytes { try socket.set(.receiveBuffer, receiveBufferBytes) }
        try socket.connect(endpoint)
    }

    deinit { socket.close() }

    /// Sends a request and waits for its reply; events and frames arriving meanwhile are kept.
    public func request(_ request: EdgeRequest, timeout: Duration = .seconds(5)) throws -> EdgeReply {
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
    public func open(clientID: String = UUID().uuidString) throws {
        let reply = try request(.openSession(clientID: clientID, sdkVersion: "test"))
        if let failure = reply.failure { throw failure }
    }

    /// Joins and returns the reply.
    public func join(_ channel: String, uid: UInt32, token: String, role: ClientRole) throws -> EdgeReply {
        try request(.join(channel: channel, uid: uid, token: token, role: role, options: .defaults(for: role)))
    }

    /// Publishes one media frame.
    public func publish(channel: String, uid: UInt32, track: WireTrackKind, sequence: UInt32, keyframe: Bool, payload: [UInt8]) throws {
        let header = WireMediaHeader.testFrame(channel: channel, uid: uid, track: track, sequence: sequence,
                                               keyframe: keyframe, payloadSize: payload.count)
        var envelope = WireEnvelope()
        envelope.kind = .mediaFrame
        envelope.body = try header.serializedData()
        guard try socket.send(frames: [try envelope.serializedBytes(), payload]) == .sent else {
            throw ShowroomError.unavailable("the edge is not taking frames")
        }
    }

    /// Waits for an event matching `match`, looking first at those already received.
    @discardableResult
    public func waitForEvent(timeout: Duration = .seconds(5), _ what: String, _ match: (EdgeEvent) -> Bool) throws -> EdgeEvent {
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
    public func waitForFrames(_ count: Int, timeout: Duration = .seconds(5)) throws {
        let deadline = ContinuousClock.now + timeout
        while frames.count < count, ContinuousClock.now < deadline {
            _ = try receiveOne(until: deadline)
        }
        if frames.count < count {
            throw ShowroomError.deadlineExceeded("\(frames.count) of \(count) frames within \(timeout)")
        }
    }

    /// Forgets the frames received so far.
    public func clearFrames() { frames.removeAll() }

    /// Receives whatever arrives within `duration` (to check that nothing does).
    public func drain(for duration: Duration) throws {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline { _ = try receiveOne(until: deadline) }
    }

    public func send(_ envelope: WireEnvelope) throws {
        guard try socket.send(frames: [try envelope.serializedBytes()]) == .sent else {
            throw ShowroomError.unavailable("the edge is not taking messages")
        }
    }

    /// Receives one message; events and frames are filed, a response is returned.
    private func receiveOne(until deadline: ContinuousClock.Instant) throws -> WireEnvelope? {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero, try socket.poll(.readable, timeout: left).contains(.readable),
            try socket.receive(into: buffer)
        else { return nil }
        let envelope = try buffer.withBytes(of: 0) { (bytes) throws(ShowroomError) in try WireEnvelope.decode(frame: bytes) }
        if envelope.isResponse { return envelope }
        if envelope.kind == .mediaFrame {
            frames.append((try envelope.decodeBody(WireMediaHeader.self), buffer.count > 1 ? buffer.bytes(of: 1) : []))
        } else if envelope.kind == .keyframeRequest {
            keyframeRequests += 1
        } else {
            events.append(try EdgeCodec.event(from: envelope))
        }
        return nil
    }
}

extension WireMediaHeader {
    /// The header of a test client's media frame: VP8 video or Opus audio (heard at level 80).
    public static func testFrame(channel: String, uid: UInt32, track: WireTrackKind, sequence: UInt32, keyframe: Bool,
                                 payloadSize: Int) -> WireMediaHeader {
        var header = WireMediaHeader()
        header.channel = channel
        header.publisherUid = uid
        header.track = track
        header.codec = track == .audio ? .opus : .vp8
        header.sequence = sequence
        header.keyframe = keyframe
        header.audioLevel = track == .audio ? 80 : 0
        header.payloadSize = UInt32(payloadSize)
        return header
    }
}
