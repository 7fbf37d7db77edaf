import Foundation
import HTTPTypes
import OpenAPIRuntime
import ShowroomWire
import Synchronization

/// What stands before every operation: the customer key (401), its scope (403) and its request
/// rate (429 with `Retry-After`); after it, every error becomes the JSON error body with the
/// status that fits its code. Operations with no scope (health, the document) are open.
struct APIGuard: ServerMiddleware {
    let keys: CustomerKeys
    let rate: Shared<RequestRate>
    let nowMs: @Sendable () -> Int64

    /// The scope each operation needs; an operation not listed needs none.
    static let scopes: [String: APIScope] = [
        "listRooms": .read, "getRoom": .read, "getCluster": .read,
        "listChannels": .read, "listChannelUsers": .read, "getChannelUser": .read,
        "agoraListChannels": .read, "agoraChannelUsers": .read, "agoraChannelHosts": .read, "agoraUserProperty": .read,
        "createRoom": .rooms, "closeRoom": .rooms, "updateRoom": .rooms,
        "startPK": .rooms, "stopPK": .rooms, "seatCoHost": .rooms, "unseatCoHost": .rooms, "listPKs": .read,
        "kickUser": .moderation, "muteUser": .moderation, "sendChannelMessage": .moderation,
        "getWebhooks": .read, "testWebhooks": .rooms,
        "listCalls": .read, "getCall": .read, "getPresence": .read, "endCall": .calls,
        "listBans": .read, "agoraListKickingRules": .read,
        "createBan": .moderation, "updateBan": .moderation, "deleteBan": .moderation,
        "listRecordings": .read, "getRecording": .read, "listRecordingsInProgress": .read,
        "startRecording": .recording, "stopRecording": .recording, "agoraRecordingQuery": .read,
        "agoraRecordingAcquire": .recording, "agoraRecordingStart": .recording, "agoraRecordingStop": .recording,
        "agoraCreateKickingRule": .moderation, "agoraUpdateKickingRule": .moderation, "agoraDeleteKickingRule": .moderation,
    ]

    init(keys: CustomerKeys, rate: RequestRate, nowMs: @escaping @Sendable () -> Int64) {
        self.keys = keys
        self.rate = Shared(rate)
        self.nowMs = nowMs
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        if let refusal = refusal(of: request, operationID: operationID) { return refusal }
        do {
            return try await next(request, body, metadata)
        } catch let error as ServerError {
            if let failure = error.underlyingError as? ShowroomError {
                return Self.errorResponse(failure)
            }
            if let refusal = error.underlyingError as? APIRefusal {
                return Self.errorResponse(refusal.error, status: refusal.status)
            }
            // The generated code could not read the request: a missing or mistyped parameter, a
            // body that is not the document's JSON.
            return Self.errorResponse(ShowroomError(.invalidArgument, Self.describe(error)))
        }
    }

    /// The answer refusing `request` before `operationID` runs (key, scope, rate, query
    /// parameters), or nil to let it run. Takes from the key's rate when it lets it run.
    func refusal(of request: HTTPRequest, operationID: String) -> (HTTPResponse, HTTPBody?)? {
        if let scope = Self.scopes[operationID] {
            switch keys.authenticate(authorization: request.headerFields[.authorization]) {
            case .failure(let refusal):
                let message = refusal == .noCredentials
                    ? "send HTTP Basic credentials: a customer key's id and secret (Authorization: Basic base64(id:secret))"
                    : "unknown customer key id or wrong secret"
                var response = Self.errorResponse(ShowroomError(.permissionDenied, message), status: .unauthorized)
                response.0.headerFields[.wwwAuthenticate] = "Basic realm=\"showroom\""
                return response
            case .success(let key):
                guard key.scopes.contains(scope) else {
                    return Self.errorResponse(ShowroomError(.permissionDenied,
                        "customer key '\(key.id)' lacks the scope '\(scope.rawValue)' that \(operationID) needs (it has \(key.scopes.sorted().map(\.rawValue).joined(separator: ", ")))"),
                        status: .forbidden)
                }
                let now = nowMs()
                if let retryAfter = rate.withLock({ $0.take(key.id, rate: key.rate, nowMs: now) }) {
                    let perSecond = key.rate?.perSecond ?? rate.withLock { $0.perSecond }
                    var response = Self.errorResponse(ShowroomError(.rateLimited,
                        "customer key '\(key.id)' made more than its \(perSecond.formatted()) requests a second; retry after \(retryAfter) s"),
                        status: .tooManyRequests)
                    response.0.headerFields[.retryAfter] = String(retryAfter)
                    return response
                }
            }
        }
        if let allowed = APIDocument.served.queryNames[operationID],
           let unknown = APIDocument.queryNames(of: request.path ?? "").first(where: { !allowed.contains($0) }) {
            let takes = allowed.isEmpty ? "takes none" : "takes \(allowed.sorted().joined(separator: ", "))"
            return Self.errorResponse(.invalidArgument("\(operationID) has no query parameter '\(unknown.prefix(40))'; it \(takes)"))
        }
        return nil
    }

    /// What went wrong reading a request, for a person: the runtime's own words, without the
    /// operation's internals.
    static func describe(_ error: ServerError) -> String {
        var text = "\(error.causeDescription)"
        if let decoding = error.underlyingError as? DecodingError {
            switch decoding {
            case .keyNotFound(let key, let context):
                text = "the body lacks '\((context.codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: "."))'"
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                let path = context.codingPath.map(\.stringValue).joined(separator: ".")
                text = path.isEmpty ? "the body is not valid JSON for this operation" : "'\(path)' has the wrong type or value"
            @unknown default:
                break
            }
        } else {
            text += ": \(error.underlyingError)"
        }
        return "\(error.operationID): \(text.prefix(300))"
    }

    /// The HTTP status for an error's code.
    static func status(of error: ShowroomError) -> HTTPResponse.Status {
        switch error.code {
        case .roomNotFound, .interactionNotFound, .unknownCall, .notJoined, .unknownTrack, .banRuleNotFound, .recordingNotFound:
            return .notFound
        case .recordingConflict, .roomExists, .roomClosed, .roomBusy, .requestPending, .interactionNotAllowed, .noSeatFree, .callStateMismatch,
             .callEnded, .callerInCall, .alreadyJoined:
            return .conflict
        case .permissionDenied, .adminUnauthorized, .notRoomOwner, .notYourCall:
            return .forbidden
        case .tooLarge, .chatMessageTooLarge:
            return .contentTooLarge
        case .unavailable, .noCoordinator, .noEdgeAvailable, .noCallSignal, .deadlineExceeded:
            return .serviceUnavailable
        case .callRateLimited, .streamMessageRateLimited, .rateLimited:
            return .tooManyRequests
        case .internal, .unrecognized, .unspecified:
            return .internalServerError
        default:
            return .badRequest
        }
    }

    /// The JSON error answer.
    static func errorResponse(_ error: ShowroomError, status: HTTPResponse.Status? = nil) -> (HTTPResponse, HTTPBody?) {
        let body = APIErrorBody(code: "\(error.code)", number: error.number, message: error.message)
        let data = (try? JSONEncoder().encode(body)) ?? Data(#"{"code":"internal","number":1004,"message":""}"#.utf8)
        let response = HTTPResponse(status: status ?? Self.status(of: error), headerFields: [
            .contentType: "application/json; charset=utf-8",
            .cacheControl: "no-store",
        ])
        return (response, HTTPBody(data))
    }
}

/// An error whose HTTP status is not the one its code maps to (Agora's 401 for an unknown App ID).
struct APIRefusal: Error {
    var status: HTTPResponse.Status
    var error: ShowroomError
}

/// The error body every failure of the API has (the document's `Error`).
struct APIErrorBody: Codable, Equatable {
    var code: String
    var number: Int
    var message: String
}

/// A value several tasks share, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<Result: Sendable>(_ body: (inout sending Value) throws -> sending Result) rethrows -> Result {
        try mutex.withLock(body)
    }
}
