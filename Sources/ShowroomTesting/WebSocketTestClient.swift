import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import NIOSSL
import ShowroomWire
import Synchronization

/// A connection neither upgraded nor refused by its deadline.
public struct NeverUpgraded: Error {
    public init() {}
}

/// A scripted browser for tests of the WebSocket faces: connects to `url` (with `origin` as a
/// page's `Origin`, or none) and runs `script` on the connection, which closes when it returns.
/// At the deadline the connection is cut, so a script waiting for what never comes fails instead
/// of hanging, and a refused connection that is never told so counts as refused
/// (``NeverUpgraded``).
///
/// - Throws: What the connection ended with when it was refused; what `script` throws.
public func withWebSocket(
    url: String, origin: String? = nil, tls: TLSConfiguration? = nil, deadline limit: Duration = .seconds(10),
    _ script: (WebSocketInboundMessageStream.AsyncIterator, WebSocketOutboundWriter) async throws -> Void
) async throws {
    var fields = HTTPFields()
    if let origin { fields[.origin] = origin }
    let headers = fields
    let (opened, open) = AsyncStream<(WebSocketInboundStream, WebSocketOutboundWriter)>.makeStream()
    let (finished, finish) = AsyncStream<Void>.makeStream()
    let ended = Mutex<(any Error)?>(nil)
    @Sendable func connect() async throws {
        try await WebSocketClient.connect(
            url: url, configuration: .init(maxFrameSize: 1 << 22, additionalHeaders: headers, sniHostname: tls == nil ? nil : "localhost"),
            tlsConfiguration: tls,
            logger: Logger(label: "browser")
        ) { inbound, outbound, _ in
            open.yield((inbound, outbound))
            for await _ in finished {}
        }
    }
    let connection = Task {
        defer { open.finish() }
        do {
            try await connect()
        } catch {
            ended.withLock { $0 = error }
        }
    }
    let deadline = Task {
        try await Task.sleep(for: limit)  // the deadline of the whole script
        connection.cancel()
        open.finish()
        finish.finish()
    }
    defer { deadline.cancel() }
    var iterator = opened.makeAsyncIterator()
    guard let (inbound, outbound) = await iterator.next() else {
        if let error = ended.withLock({ $0 }) { throw error }
        throw NeverUpgraded()
    }
    do {
        try await script(inbound.messages(maxSize: 1 << 22).makeAsyncIterator(), outbound)
    } catch {
        finish.finish()
        _ = await connection.result
        throw error
    }
    finish.finish()
    _ = await connection.result
}

/// Frames and sends one envelope (and its attachment) the way ``WebSocketFraming`` says.
public func sendFramed(_ envelope: WireEnvelope, payload: [UInt8]? = nil, on outbound: WebSocketOutboundWriter) async throws {
    let bytes: [UInt8] = try envelope.serializedBytes()
    let message = bytes.withUnsafeBytes { envelope in
        payload.map { $0.withUnsafeBytes { WebSocketFraming.message(envelope: envelope, payload: $0) } } ?? WebSocketFraming.message(envelope: envelope)
    }
    try await outbound.writeBinaryMessage(ByteBuffer(bytes: message))
}

/// The next message's envelope and attachment.
/// - Throws: `unavailable` when the server closed the connection, `malformed` for text or bad framing.
public func receiveFramed(_ messages: inout WebSocketInboundMessageStream.AsyncIterator) async throws -> (envelope: WireEnvelope, payload: [UInt8]) {
    guard let message = try await messages.next() else { throw ShowroomError.unavailable("the server closed the connection") }
    guard case .binary(let buffer) = message else { throw ShowroomError.malformed("the server sent text") }
    let bytes = Array(buffer.readableBytesView)
    let parts = bytes.withUnsafeBytes { bytes in Result { () throws(ShowroomError) in try WebSocketFraming.parts(of: bytes) } }
    let (envelopeRange, payloadRange) = try parts.get()
    let envelope = try WireEnvelope(serializedBytes: Array(bytes[envelopeRange]))
    return (envelope, Array(bytes[payloadRange]))
}
