import Membership
import ShowroomWire
import SwiftProtobuf

/// What a role's logic needs from the node it runs on: its view of the members, request
/// handlers, requests to other members, timers and the clock. ``Node`` provides it over ZeroMQ;
/// an in-process harness provides it with a fake network and a clock it moves by hand, so a
/// role's request handling is tested without processes. Everything runs on one thread (the
/// node's loop): calls, handlers, completions and timers.
public protocol NodeServices: AnyObject {
    /// This member's node id.
    var nodeID: String { get }
    /// The members this node knows, itself included.
    var membersOnLoop: [Member] { get }
    /// Changes whenever ``membersOnLoop`` may have: what is derived from the members (an
    /// ``OwnerRing``) can be kept until it moves.
    var membershipGeneration: UInt64 { get }
    /// The wall clock every decision of the role reads.
    var clock: WallClock { get }
    /// Serves requests of `kind` with `handler`, which answers through its responder exactly
    /// once, now or later.
    func serve(_ kind: WireMessageKind, _ handler: @escaping (_ request: WireEnvelope, _ respond: Node.Responder) -> Void)
    /// Passes `request` on to the member at `endpoint` (marked forwarded, so that member serves it
    /// itself); `completion` gets its answer envelope, or `deadlineExceeded` / `unavailable`.
    func forward(_ request: WireEnvelope, to endpoint: String, timeout: Duration,
                 completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void)
    /// Sends a request to the member at `endpoint`; `completion` gets its answer envelope (which
    /// may carry an error), or `deadlineExceeded` / `unavailable`.
    func send(_ kind: WireMessageKind, body: some SwiftProtobuf.Message, to endpoint: String, timeout: Duration,
              completion: @escaping (Result<WireEnvelope, ShowroomError>) -> Void)
    /// Calls `observer` whenever a member's state changes or a new member appears.
    func onMembershipChange(_ observer: @escaping () -> Void)
    /// Runs `action` every `interval`.
    func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void)
    /// Whether this node's connection to the member at `endpoint` broke and is not up again: the
    /// member most likely died, before the membership could say so.
    func connectionBroken(to endpoint: String) -> Bool
}

extension NodeServices {
    /// The cluster endpoint of member `id`, if known.
    public func clusterEndpoint(of id: String) -> String? {
        membersOnLoop.first { $0.id.rawValue == id }?.metadata.clusterEndpoint
    }

    /// Scatter-gather: passes each request on to its member (marked forwarded) and calls `done`
    /// once, with every answer in the order given, or with the first failure — a member unknown,
    /// silent or answering with an error. With no request, `done` runs at once.
    public func forwardAll(_ requests: [(member: String, request: WireEnvelope)], timeout: Duration,
                           done: @escaping (Result<[WireEnvelope], ShowroomError>) -> Void) {
        var answers = [WireEnvelope?](repeating: nil, count: requests.count)
        var remaining = requests.count
        var failure: ShowroomError?
        guard remaining > 0 else { return done(.success([])) }
        let answered = { (index: Int, result: Result<WireEnvelope, ShowroomError>) in
            switch result {
            case .success(let answer):
                if let error = answer.failure { failure = failure ?? error } else { answers[index] = answer }
            case .failure(let error): failure = failure ?? error
            }
            remaining -= 1
            guard remaining == 0 else { return }
            if let failure { done(.failure(failure)) } else { done(.success(answers.compactMap { $0 })) }
        }
        for (index, (member, request)) in requests.enumerated() {
            guard let endpoint = clusterEndpoint(of: member) else {
                answered(index, .failure(.unavailable("member \(member) is not known here")))
                continue
            }
            forward(request, to: endpoint, timeout: timeout) { answered(index, $0) }
        }
    }
}

extension Node: NodeServices {
    public var nodeID: String { configuration.nodeID }

    public var clock: WallClock { .system }

    public func serve(_ kind: WireMessageKind, _ handler: @escaping (WireEnvelope, Responder) -> Void) {
        handleDeferred(kind) { request, _, respond in handler(request, respond) }
    }

    public func scheduleRepeating(every interval: Duration, _ action: @escaping () -> Void) {
        _ = loop.scheduleRepeating(every: interval, action)
    }
}
