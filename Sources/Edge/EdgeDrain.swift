import ShowroomWire

/// An edge's drain (make before break), as a pure state machine: begun once, the clients told
/// once the coordinators know, finished when no client is left to move or at the deadline; then
/// whoever asked for it (`Waiter`, the shell's to run) is told.
public struct EdgeDrain<Waiter> {
    /// Whether the edge drains (it refuses new joins).
    public private(set) var isDraining = false
    /// The edge's id, named in what the clients are told at the end.
    public private(set) var nodeID = ""
    private var deadline: Duration?
    private var waiters: [Waiter] = []

    /// Not draining.
    public init() {}

    /// Why `request` is refused: a join while draining (the edge takes no new ones). Nil for
    /// anything else, and for everything before the drain.
    public func refusal(of request: EdgeRequest) -> ShowroomError? {
        guard isDraining, case .join = request else { return nil }
        return .unavailable("this edge is shutting down; join the channel again through the cluster")
    }

    /// Why the sessions left at the end are closed.
    public var closing: ShowroomError {
        .unavailable("edge \(nodeID) is shutting down; join the channel again through the cluster")
    }

    /// Begins draining, `waiter` told when it ends; false if it had begun already (`waiter` is
    /// told with the others).
    public mutating func begin(nodeID: String, waiter: Waiter) -> Bool {
        waiters.append(waiter)
        guard !isDraining else { return false }
        isDraining = true
        self.nodeID = nodeID
        return true
    }

    /// The coordinators know: the clients are told, and get `within` to move. False if they were
    /// told already.
    public mutating func clientsTold(now: Duration, within: Duration) -> Bool {
        guard isDraining, deadline == nil else { return false }
        deadline = now + within
        return true
    }

    /// Whether what is left is to be closed now (the drain then ends): the waiters to tell once
    /// it is, nil if not now.
    public mutating func finishes(now: Duration, awaitsMovingClients: Bool) -> [Waiter]? {
        guard let deadline, now >= deadline || !awaitsMovingClients else { return nil }
        self.deadline = nil
        defer { waiters = [] }
        return waiters
    }
}

extension EdgeDrain: Sendable where Waiter: Sendable {}
