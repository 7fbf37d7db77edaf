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
}

extension NodeServices {
    /// The cluster endpoint of member `id`, if known.
    public func clusterEndpoint(of id: String) -> String? {
        membersOnLoop.first { $0.id.rawValue == id }?.metadata.clusterEndpoint
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
