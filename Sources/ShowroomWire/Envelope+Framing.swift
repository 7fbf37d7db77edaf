#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SwiftProtobuf

// Helpers for frame 0 of every Showroom message, the `Envelope` (see proto/README.md):
// building requests and responses, and decoding the envelope and its body with failures mapped
// to `ShowroomError` (`ERROR_CODE_MALFORMED_MESSAGE`). The ZeroMQ side lives elsewhere.

extension WireEnvelope {
    /// The protocol version this build speaks, set in `protocolVersion` by the initialisers below.
    public static let currentProtocolVersion = UInt32(WireProtocolVersion.current.rawValue)

    /// Creates a request, or a one-way message when `requestID` is 0.
    ///
    /// - Parameters:
    ///   - kind: What the body holds.
    ///   - requestID: Correlates the response with this request; 0 for a one-way message.
    ///   - body: The kind-specific message, serialized into `body`.
    ///   - senderNode: Node id of the sending process (empty for clients).
    ///   - deadlineMs: Milliseconds the sender will wait for the answer (0 = receiver's default).
    /// - Throws: ``ShowroomError`` with code `ERROR_CODE_INTERNAL` if `body` cannot be serialized.
    public init<Body: SwiftProtobuf.Message>(
        request kind: WireMessageKind,
        id requestID: UInt64,
        body: Body,
        senderNode: String = "",
        deadlineMs: UInt32 = 0
    ) throws(ShowroomError) {
        self.init()
        self.kind = kind
        self.requestID = requestID
        self.senderNode = senderNode
        self.deadlineMs = deadlineMs
        self.protocolVersion = Self.currentProtocolVersion
        self.body = try Self.serialize(body, for: kind)
    }

    /// Creates the successful response to `request`: same kind and request id, `isResponse` set.
    ///
    /// - Parameters:
    ///   - request: The envelope being answered.
    ///   - body: The kind-specific response message, serialized into `body`.
    ///   - senderNode: Node id of the answering process (empty for clients).
    /// - Throws: ``ShowroomError`` with code `ERROR_CODE_INTERNAL` if `body` cannot be serialized.
    public init<Body: SwiftProtobuf.Message>(
        responseTo request: WireEnvelope,
        body: Body,
        senderNode: String = ""
    ) throws(ShowroomError) {
        self.init(responseHeaderFor: request, senderNode: senderNode)
        self.body = try Self.serialize(body, for: request.kind)
    }

    /// Creates the failed response to `request`: same kind and request id, `isResponse` set,
    /// `error` set and the body empty.
    ///
    /// - Parameters:
    ///   - request: The envelope being answered.
    ///   - error: Why the request failed.
    ///   - senderNode: Node id of the answering process (empty for clients).
    public init(responseTo request: WireEnvelope, error: ShowroomError, senderNode: String = "") {
        self.init(responseHeaderFor: request, senderNode: senderNode)
        self.error = error.wire
    }

    /// The error carried by a failed response, or `nil` if `error` is not set.
    public var failure: ShowroomError? {
        hasError ? ShowroomError(wire: error) : nil
    }

    /// Decodes the body as `M`, the message type the envelope's kind defines.
    ///
    /// - Parameter type: The expected body message type.
    /// - Returns: The decoded body.
    /// - Throws: ``ShowroomError`` with code `ERROR_CODE_MALFORMED_MESSAGE` naming the kind and
    ///   the expected type if the body is not a valid `M`.
    public func decodeBody<M: SwiftProtobuf.Message>(_ type: M.Type) throws(ShowroomError) -> M {
        do {
            return try M(serializedBytes: body)
        } catch {
            throw .malformed(
                "body of \(kind) message (request \(requestID), \(body.count) bytes) from "
                    + "'\(senderNode)' is not a valid \(M.protoMessageName): \(error)"
            )
        }
    }

    /// Decodes frame 0 of a Showroom message straight from a received frame's memory, without
    /// copying it first (the receive path of every socket: one copy fewer per message). The
    /// envelope owns its fields after decoding; `bytes` need only live for the call.
    ///
    /// - Parameter bytes: The frame's bytes, without the ROUTER routing id.
    /// - Returns: The envelope.
    /// - Throws: ``ShowroomError`` `ERROR_CODE_MALFORMED_MESSAGE`, as ``decode(frame:)-(Bytes)``.
    public static func decode(frame bytes: UnsafeRawBufferPointer) throws(ShowroomError) -> WireEnvelope {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return try decode(frame: Data()) }
        // swift-protobuf copies `bytes` and `string` fields out, so the wrapper does not escape.
        return try decode(frame: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none))
    }

    /// Decodes frame 0 of a Showroom message.
    ///
    /// - Parameter bytes: The frame's bytes, without the ROUTER routing id.
    /// - Returns: The envelope.
    /// - Throws: ``ShowroomError`` with code `ERROR_CODE_MALFORMED_MESSAGE` if the frame is not a
    ///   valid `showroom.wire.Envelope`.
    public static func decode<Bytes: SwiftProtobufContiguousBytes>(
        frame bytes: Bytes
    ) throws(ShowroomError) -> WireEnvelope {
        do {
            return try WireEnvelope(serializedBytes: bytes)
        } catch {
            throw .malformed(
                "frame 0 (\(bytes.count) bytes) is not a valid showroom.wire.Envelope: \(error); "
                    + "the sender does not speak the Showroom wire protocol or sent the frames in the wrong order"
            )
        }
    }

    private init(responseHeaderFor request: WireEnvelope, senderNode: String) {
        self.init()
        self.kind = request.kind
        self.requestID = request.requestID
        self.isResponse = true
        self.senderNode = senderNode
        self.protocolVersion = Self.currentProtocolVersion
    }

    private static func serialize<Body: SwiftProtobuf.Message>(
        _ body: Body,
        for kind: WireMessageKind
    ) throws(ShowroomError) -> Data {
        do {
            return try body.serializedBytes()
        } catch {
            throw .internal("cannot serialize \(Body.protoMessageName) as the body of a \(kind) message: \(error)")
        }
    }
}
