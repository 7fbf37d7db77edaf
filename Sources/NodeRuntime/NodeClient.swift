import Foundation
import ShowroomWire
import SwiftProtobuf
import ZeroMQ

/// A blocking request/response client for one node's cluster endpoint, for tools and tests.
///
/// Confined to the thread that created it (it owns a ZeroMQ socket); never use it from async
/// code. Members talk to each other through their event loops instead.
public final class NodeClient {
    /// The endpoint the client talks to.
    public let endpoint: String
    private let socket: Socket
    private var nextRequestID: UInt64 = 1

    /// Connects to `endpoint` (the connection is made in the background).
    ///
    /// - Parameter credentials: CURVE keys for a cluster endpoint of a cluster with a keyring
    ///   (an operator's key pair listed there); nil for a client endpoint or a plain cluster.
    public init(endpoint: String, context: Context, credentials: ClusterCredentials? = nil) throws(ZeroMQError) {
        self.endpoint = endpoint
        socket = try Socket(.dealer, context: context)
        try socket.set(.immediate, 1)  // queue nothing for a peer that is not connected
        try credentials?.apply(to: socket)
        try socket.connect(endpoint)
    }

    /// Sends a request and waits up to `timeout` for its answer.
    /// - Throws: ``ShowroomError``: the node's error answer, `deadlineExceeded` when no answer
    ///   came in time, `malformed` when the answer could not be read.
    public func request<Response: SwiftProtobuf.Message>(
        _ kind: WireMessageKind, body: some SwiftProtobuf.Message, expecting: Response.Type,
        timeout: Duration = .seconds(3)
    ) throws(ShowroomError) -> Response {
        let id = nextRequestID
        nextRequestID += 1
        let deadlineMs = UInt32(clamping: timeout.milliseconds)
        let envelope = try WireEnvelope(request: kind, id: id, body: body, deadlineMs: deadlineMs)
        let frame: [UInt8]
        do { frame = try envelope.serializedBytes() } catch {
            throw .internal("cannot serialize request: \(error)")
        }
        let answer = try exchange([frame], requestID: id, timeout: timeout)
        if let failure = answer.failure { throw failure }
        return try answer.decodeBody(Response.self)
    }

    /// Sends raw frames and waits for the node's answer envelope; for probing how a node treats
    /// malformed input. An answer with request id 0 (the node could not read the id) is accepted.
    public func exchange(_ frames: [[UInt8]], requestID: UInt64, timeout: Duration) throws(ShowroomError) -> WireEnvelope {
        let deadline = ContinuousClock.now + timeout
        do {
            // With IMMEDIATE set, a send before the connection is up is refused: retry until then.
            while try socket.send(frames: frames) != .sent {
                guard ContinuousClock.now < deadline else { throw ShowroomError.deadlineExceeded(unreachable(timeout)) }
                _ = try socket.poll(.writable, timeout: .milliseconds(10))
            }
            while ContinuousClock.now < deadline {
                guard try socket.poll(.readable, timeout: ContinuousClock.now.duration(to: deadline)).contains(.readable),
                      let reply = try socket.receiveFrames()
                else { continue }
                let envelope = try WireEnvelope.decode(frame: Data(reply[0]))
                if envelope.requestID == requestID || (envelope.requestID == 0 && envelope.hasError) {
                    return envelope
                }
            }
        } catch let error as ShowroomError {
            throw error
        } catch {
            throw .unavailable("talking to \(endpoint): \(error)")
        }
        throw .deadlineExceeded(unreachable(timeout))
    }

    private func unreachable(_ timeout: Duration) -> String {
        "no answer from \(endpoint) within \(timeout): is a Showroom node running there?"
    }
}
