import ShowroomWire
import SwiftProtobuf

/// Converts ``GossipMessage`` to and from its wire form, `showroom.membership.Packet`
/// (`proto/showroom/membership/gossip.proto`), the body of a one-way `MESSAGE_KIND_GOSSIP`
/// envelope.
///
/// Decoding validates what the state machine relies on (a sender with id and endpoint, exactly one
/// body, ids on every update, metadata on alive updates and push-pull rows) and reports anything
/// else as ``ShowroomError`` `ERROR_CODE_MALFORMED_MESSAGE`. Updates with a state this version does
/// not know (a newer sender's) are skipped rather than rejected, so old and new members can gossip.
public enum GossipCodec {
    /// Encodes a message as the bytes of a `showroom.membership.Packet`.
    ///
    /// - Parameter message: The message.
    /// - Returns: The protobuf bytes, for the envelope's body.
    /// - Throws: ``ShowroomError`` `ERROR_CODE_INTERNAL` if protobuf cannot serialize it.
    public static func encode(_ message: GossipMessage) throws(ShowroomError) -> [UInt8] {
        do {
            return try packet(for: message).serializedBytes()
        } catch {
            throw .internal("cannot serialize a gossip \(message.kind.rawValue) message: \(error)")
        }
    }

    /// Decodes the bytes of a `showroom.membership.Packet`.
    ///
    /// - Parameter bytes: The envelope's body.
    /// - Returns: The message.
    /// - Throws: ``ShowroomError`` `ERROR_CODE_MALFORMED_MESSAGE` saying what is wrong.
    public static func decode(_ bytes: some SwiftProtobufContiguousBytes) throws(ShowroomError) -> GossipMessage {
        let packet: GossipPacket
        do {
            packet = try GossipPacket(serializedBytes: bytes)
        } catch {
            throw .malformed("gossip body (\(bytes.count) bytes) is not a valid showroom.membership.Packet: \(error)")
        }
        return try message(from: packet)
    }

    /// The wire form of a message, for callers that build the envelope themselves.
    ///
    /// - Parameter message: The message.
    /// - Returns: The equivalent `showroom.membership.Packet`.
    public static func packet(for message: GossipMessage) -> GossipPacket {
        var packet = GossipPacket()
        packet.sender = address(message.sender)
        switch message {
        case .ping(let m):
            var ping = GossipPing()
            ping.sequence = m.sequence
            ping.target = m.target.rawValue
            ping.updates = m.updates.map(update)
            packet.body = .ping(ping)
        case .pingRequest(let m):
            var request = GossipPingRequest()
            request.sequence = m.sequence
            request.target = address(m.target)
            request.wantsNack = m.wantsNack
            request.updates = m.updates.map(update)
            packet.body = .pingRequest(request)
        case .ack(let m):
            var ack = GossipAck()
            ack.sequence = m.sequence
            ack.updates = m.updates.map(update)
            packet.body = .ack(ack)
        case .nack(let m):
            var nack = GossipNack()
            nack.sequence = m.sequence
            packet.body = .nack(nack)
        case .pushPull(let m):
            var pushPull = GossipPushPull()
            pushPull.isReply = m.isReply
            pushPull.isJoin = m.isJoin
            pushPull.members = m.members.map(update)
            packet.body = .pushPull(pushPull)
        case .broadcast(let m):
            var broadcast = GossipBroadcast()
            broadcast.updates = m.updates.map(update)
            packet.body = .broadcast(broadcast)
        }
        return packet
    }

    /// The message a packet carries, validated as ``decode(_:)`` does.
    ///
    /// - Parameter packet: A decoded `showroom.membership.Packet`.
    /// - Returns: The message.
    /// - Throws: ``ShowroomError`` `ERROR_CODE_MALFORMED_MESSAGE` saying what is wrong.
    public static func message(from packet: GossipPacket) throws(ShowroomError) -> GossipMessage {
        guard packet.hasSender, !packet.sender.id.isEmpty, !packet.sender.endpoint.isEmpty else {
            throw .malformed("gossip packet has no sender id or endpoint; every gossip message must name its sender")
        }
        let sender = MemberAddress(id: MemberID(packet.sender.id), endpoint: packet.sender.endpoint)
        let origin = "gossip from '\(packet.sender.id)'"
        switch packet.body {
        case .ping(let m):
            guard !m.target.isEmpty else { throw .malformed("\(origin): ping has no target id") }
            return .ping(.init(
                sender: sender, sequence: m.sequence, target: MemberID(m.target),
                updates: try updates(m.updates, origin: origin, requireMetadata: false)))
        case .pingRequest(let m):
            guard m.hasTarget, !m.target.id.isEmpty, !m.target.endpoint.isEmpty else {
                throw .malformed("\(origin): ping request has no target id or endpoint")
            }
            return .pingRequest(.init(
                sender: sender, sequence: m.sequence,
                target: MemberAddress(id: MemberID(m.target.id), endpoint: m.target.endpoint),
                wantsNack: m.wantsNack,
                updates: try updates(m.updates, origin: origin, requireMetadata: false)))
        case .ack(let m):
            return .ack(.init(
                sender: sender, sequence: m.sequence,
                updates: try updates(m.updates, origin: origin, requireMetadata: false)))
        case .nack(let m):
            return .nack(.init(sender: sender, sequence: m.sequence))
        case .pushPull(let m):
            return .pushPull(.init(
                sender: sender, isReply: m.isReply, isJoin: m.isJoin,
                members: try updates(m.members, origin: origin, requireMetadata: true)))
        case .broadcast(let m):
            return .broadcast(.init(
                sender: sender, updates: try updates(m.updates, origin: origin, requireMetadata: false)))
        case nil:
            throw .malformed("\(origin): packet has no body (empty, or a message kind this version does not know)")
        }
    }

    // MARK: - Pieces

    private static func address(_ address: MemberAddress) -> GossipAddress {
        var wire = GossipAddress()
        wire.id = address.id.rawValue
        wire.endpoint = address.endpoint
        return wire
    }

    private static func update(_ update: MemberUpdate) -> GossipMemberUpdate {
        var wire = GossipMemberUpdate()
        wire.id = update.id.rawValue
        wire.state = update.state.wire
        wire.incarnation = update.incarnation
        if let metadata = update.metadata {
            wire.metadata = self.metadata(metadata)
        }
        wire.from = update.from?.rawValue ?? ""
        return wire
    }

    private static func metadata(_ metadata: MemberMetadata) -> GossipMetadata {
        var wire = GossipMetadata()
        wire.role = metadata.role
        wire.clusterEndpoint = metadata.clusterEndpoint
        wire.clientEndpoint = metadata.clientEndpoint
        wire.eventsEndpoint = metadata.eventsEndpoint
        wire.clientCurvePublicKey = metadata.clientCurvePublicKey
        wire.webSocketEndpoint = metadata.webSocketEndpoint
        wire.adminEndpoint = metadata.adminEndpoint
        wire.version = metadata.version
        wire.load = metadata.load.wire
        return wire
    }

    private static func updates(
        _ wire: [GossipMemberUpdate],
        origin: String,
        requireMetadata: Bool
    ) throws(ShowroomError) -> [MemberUpdate] {
        var result: [MemberUpdate] = []
        result.reserveCapacity(wire.count)
        for (index, row) in wire.enumerated() {
            guard !row.id.isEmpty else { throw .malformed("\(origin): member update #\(index) has no member id") }
            let state: MemberState
            switch row.state {
            case .alive: state = .alive
            case .suspect: state = .suspect
            case .dead: state = .dead
            case .left: state = .left
            case .unspecified:
                throw .malformed("\(origin): member update #\(index) about '\(row.id)' has no state")
            case .UNRECOGNIZED:
                continue  // a newer sender's state: skip the row, keep the rest
            }
            guard row.hasMetadata || !(requireMetadata || state == .alive) else {
                throw .malformed("\(origin): member update #\(index) about '\(row.id)' (\(state.rawValue)) has no metadata")
            }
            // Metadata is where gossip for the member goes: without a cluster endpoint it would
            // send probes nowhere.
            guard !row.hasMetadata || !row.metadata.clusterEndpoint.isEmpty else {
                throw .malformed("\(origin): member update #\(index) about '\(row.id)' has metadata without a cluster endpoint")
            }
            result.append(MemberUpdate(
                id: MemberID(row.id),
                state: state,
                incarnation: row.incarnation,
                metadata: row.hasMetadata ? metadata(row.metadata) : nil,
                from: row.from.isEmpty ? nil : MemberID(row.from)))
        }
        return result
    }

    private static func metadata(_ wire: GossipMetadata) -> MemberMetadata {
        var metadata = MemberMetadata(
            role: wire.role,
            clusterEndpoint: wire.clusterEndpoint,
            clientEndpoint: wire.clientEndpoint,
            adminEndpoint: wire.adminEndpoint,
            version: wire.version,
            load: MemberLoad(
                channels: Int(wire.load.channels),
                connections: Int(wire.load.connections),
                cpuPercent: wire.load.cpuPercent),
            eventsEndpoint: wire.eventsEndpoint)
        metadata.clientCurvePublicKey = wire.clientCurvePublicKey
        metadata.webSocketEndpoint = wire.webSocketEndpoint
        return metadata
    }
}

extension MemberState {
    /// The state as it travels on the wire (gossip and the status document).
    public var wire: GossipMemberState {
        switch self {
        case .alive: .alive
        case .suspect: .suspect
        case .dead: .dead
        case .left: .left
        }
    }
}

extension MemberLoad {
    /// The load as it travels on the wire (gossip and the status document).
    public var wire: GossipLoad {
        var wire = GossipLoad()
        wire.channels = UInt32(clamping: channels)
        wire.connections = UInt32(clamping: connections)
        wire.cpuPercent = cpuPercent
        return wire
    }
}
