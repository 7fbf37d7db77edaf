import ShowroomWire
import SwiftProtobuf

extension SimulatedNetwork {
    /// Sends one client request (`label` names it in the log) to `node` and hands `done` the
    /// decoded answer, the server's refusal, or the client's timeout.
    func ask<Answer: SwiftProtobuf.Message>(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message, as: Answer.Type,
                                            to node: String, timeoutMs: Int64, label: String,
                                            done: @escaping (Result<Answer, ShowroomError>) -> Void) {
        let request: WireEnvelope
        do {
            request = try WireEnvelope(request: kind, id: nextRequestID(), body: body)
        } catch {
            preconditionFailure("a client request does not encode: \(error)")
        }
        record("\(label) \(kind) at \(node)")
        send(request, from: nil, to: node, timeoutMs: timeoutMs) { [unowned self] result in
            switch result {
            case .success(let envelope):
                if let failure = envelope.failure {
                    record("\(label) fail \(failure.code)")
                    done(.failure(failure))
                } else if let answer = try? envelope.decodeBody(Answer.self) {
                    record("\(label) ok")
                    done(.success(answer))
                } else {
                    record("\(label) undecodable answer")
                    done(.failure(.internal("undecodable answer")))
                }
            case .failure(let error):
                record("\(label) unknown \(error.code)")
                done(.failure(error))
            }
        }
    }
}
