import ShowroomWire
import SwiftProtobuf

extension Result where Failure == ShowroomError {
    /// The result of `body`: its value, or the error it threw.
    public init(_ body: () throws(ShowroomError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}

extension Result where Success: SwiftProtobuf.Message, Failure == ShowroomError {
    /// The answer this result makes.
    public var outcome: Node.Responder.Outcome {
        switch self {
        case .success(let body): .success(body)
        case .failure(let error): .failure(error)
        }
    }
}

extension Result where Success == WireEnvelope, Failure == ShowroomError {
    /// The error of a request to another member: its transport failure or the refusal it answered.
    public var refusal: ShowroomError? {
        switch self {
        case .success(let answer): answer.failure
        case .failure(let error): error
        }
    }
}
