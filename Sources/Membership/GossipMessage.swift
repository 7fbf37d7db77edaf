/// One SWIM membership message between two members. Every message names its sender and the
/// sender's cluster endpoint, so the receiver can answer a member it does not know yet.
///
/// Probes are answered by separate one-way messages matched by `sequence`: a late answer or one
/// relayed by an intermediary is still meaningful to the prober. Encoded with ``GossipCodec``.
public enum GossipMessage: Sendable, Equatable {
    /// Direct probe; answered with ``ack(_:)``.
    case ping(Ping)
    /// Indirect probe: "ping this member for me"; answered with a relayed ``ack(_:)`` or a
    /// ``nack(_:)``.
    case pingRequest(PingRequest)
    /// Answer to a ping, direct or relayed.
    case ack(Ack)
    /// Lifeguard: an intermediary's "the target did not answer me either".
    case nack(Nack)
    /// Full state exchange (anti-entropy and join).
    case pushPull(PushPull)
    /// A dissemination round: updates only.
    case broadcast(Broadcast)

    /// The message kinds, for counters.
    public enum Kind: String, Sendable, CaseIterable {
        /// ``GossipMessage/ping(_:)``.
        case ping
        /// ``GossipMessage/pingRequest(_:)``.
        case pingRequest
        /// ``GossipMessage/ack(_:)``.
        case ack
        /// ``GossipMessage/nack(_:)``.
        case nack
        /// ``GossipMessage/pushPull(_:)``.
        case pushPull
        /// ``GossipMessage/broadcast(_:)``.
        case broadcast
    }

    /// Direct probe of ``target``.
    public struct Ping: Sendable, Equatable {
        /// The prober.
        public var sender: MemberAddress
        /// Chosen by the prober, repeated in the answer.
        public var sequence: UInt64
        /// Who the prober means to reach; another process at the endpoint does not answer.
        public var target: MemberID
        /// Piggy-backed updates.
        public var updates: [MemberUpdate]

        /// Creates a ping.
        public init(sender: MemberAddress, sequence: UInt64, target: MemberID, updates: [MemberUpdate] = []) {
            self.sender = sender
            self.sequence = sequence
            self.target = target
            self.updates = updates
        }
    }

    /// Asks the receiver to probe ``target`` and relay the answer.
    public struct PingRequest: Sendable, Equatable {
        /// The prober.
        public var sender: MemberAddress
        /// The prober's sequence, repeated in the relayed ack or the nack.
        public var sequence: UInt64
        /// The member to probe.
        public var target: MemberAddress
        /// Whether the prober wants a nack when the target does not answer in time.
        public var wantsNack: Bool
        /// Piggy-backed updates.
        public var updates: [MemberUpdate]

        /// Creates a ping request.
        public init(
            sender: MemberAddress,
            sequence: UInt64,
            target: MemberAddress,
            wantsNack: Bool = true,
            updates: [MemberUpdate] = []
        ) {
            self.sender = sender
            self.sequence = sequence
            self.target = target
            self.wantsNack = wantsNack
            self.updates = updates
        }
    }

    /// Answer to a ping (from its target) or to a ping request (relayed by the intermediary).
    public struct Ack: Sendable, Equatable {
        /// Who sends the ack (the target, or the intermediary relaying it).
        public var sender: MemberAddress
        /// The sequence being answered.
        public var sequence: UInt64
        /// Piggy-backed updates.
        public var updates: [MemberUpdate]

        /// Creates an ack.
        public init(sender: MemberAddress, sequence: UInt64, updates: [MemberUpdate] = []) {
            self.sender = sender
            self.sequence = sequence
            self.updates = updates
        }
    }

    /// The target of a ping request did not answer the intermediary in time.
    public struct Nack: Sendable, Equatable {
        /// The intermediary.
        public var sender: MemberAddress
        /// The ping request's sequence.
        public var sequence: UInt64

        /// Creates a nack.
        public init(sender: MemberAddress, sequence: UInt64) {
            self.sender = sender
            self.sequence = sequence
        }
    }

    /// The sender's full membership table.
    public struct PushPull: Sendable, Equatable {
        /// Who sends its table.
        public var sender: MemberAddress
        /// False for a request (answered with the receiver's table), true for that answer.
        public var isReply: Bool
        /// True when the sender is joining through the receiver.
        public var isJoin: Bool
        /// Every member the sender knows, itself and tombstones included, metadata always set.
        public var members: [MemberUpdate]

        /// Creates a push-pull message.
        public init(sender: MemberAddress, isReply: Bool, isJoin: Bool = false, members: [MemberUpdate]) {
            self.sender = sender
            self.isReply = isReply
            self.isJoin = isJoin
            self.members = members
        }
    }

    /// A dissemination round.
    public struct Broadcast: Sendable, Equatable {
        /// Who gossips.
        public var sender: MemberAddress
        /// The updates.
        public var updates: [MemberUpdate]

        /// Creates a broadcast.
        public init(sender: MemberAddress, updates: [MemberUpdate]) {
            self.sender = sender
            self.updates = updates
        }
    }

    /// The sender of the message.
    public var sender: MemberAddress {
        switch self {
        case .ping(let m): m.sender
        case .pingRequest(let m): m.sender
        case .ack(let m): m.sender
        case .nack(let m): m.sender
        case .pushPull(let m): m.sender
        case .broadcast(let m): m.sender
        }
    }

    /// The message's kind.
    public var kind: Kind {
        switch self {
        case .ping: .ping
        case .pingRequest: .pingRequest
        case .ack: .ack
        case .nack: .nack
        case .pushPull: .pushPull
        case .broadcast: .broadcast
        }
    }

    /// The piggy-backed or broadcast updates (for a push-pull: the table).
    public var updates: [MemberUpdate] {
        switch self {
        case .ping(let m): m.updates
        case .pingRequest(let m): m.updates
        case .ack(let m): m.updates
        case .nack: []
        case .pushPull(let m): m.members
        case .broadcast(let m): m.updates
        }
    }
}
