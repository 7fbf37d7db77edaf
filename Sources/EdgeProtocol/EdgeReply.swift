import ShowroomWire

/// The answer to one request (`EdgeDirective.reply(_:to:)`): only produced for requests with a
/// non-zero request id; a one-way request that fails gets an ``EdgeEvent/error(_:channel:track:)``
/// instead.
public struct EdgeReply: Sendable, Hashable {
    /// The request's id, repeated in the response envelope.
    public var requestID: UInt64
    /// The request's kind, repeated in the response envelope.
    public var kind: EdgeRequestKind
    /// The response body, or why the request failed.
    public var result: Result<EdgeReplyBody, ShowroomError>

    /// Creates a reply.
    ///
    /// - Parameters:
    ///   - requestID: The request's id (non-zero).
    ///   - kind: The request's kind.
    ///   - result: The body or the error.
    public init(requestID: UInt64, kind: EdgeRequestKind, result: Result<EdgeReplyBody, ShowroomError>) {
        self.requestID = requestID
        self.kind = kind
        self.result = result
    }

    /// The error of a failed reply, `nil` on success.
    public var failure: ShowroomError? {
        if case .failure(let error) = result { error } else { nil }
    }

    /// The body of a successful reply, `nil` on failure.
    public var body: EdgeReplyBody? {
        if case .success(let body) = result { body } else { nil }
    }
}
