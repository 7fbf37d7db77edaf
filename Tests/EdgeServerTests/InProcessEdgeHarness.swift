import Edge
import EdgeServer
import Logging
import NodeRuntime
import ShowroomTesting
import ShowroomWire
import SwiftProtobuf
import XCTest

/// An edge on the in-process network with a room-coordinator that records the edge's reports and
/// answers its claims and ban list as the test says; one thread, the clock moved by hand.
final class InProcessEdgeHarness {
    let network: InProcessNetwork
    let coordinator: InProcessNetwork.Node
    let edgeNode: InProcessNetwork.Node
    let edge: InProcessEdge
    /// The reports the coordinator took, oldest first.
    private(set) var reports: [RoomEdgeChannelReport] = []
    /// The bans the coordinator lists (`BAN_LIST`).
    var banList: [RoomBan] = []
    /// The claim answer per channel; a channel not named is granted here.
    var claimAnswers: [String: RoomClaimChannelResponse] = [:]
    private(set) var claimed: [String] = []
    /// The channels the coordinator answers a report of the edge's channels with as placed on
    /// another edge, and that edge.
    var placedElsewhere: [String: WireRedirect] = [:]

    var activities: [RoomChannelActivity] { reports.flatMap(\.activities) }

    init(settings: EdgeSettings = EdgeSettings(), startMs: Int64 = WallClock.system.nowMs(),
         random: @escaping () -> UInt64 = { .random(in: 0 ... .max) }) {
        network = InProcessNetwork(startMs: startMs)
        coordinator = network.add("coord-1", role: .coordinator)
        edgeNode = network.add("edge-1", role: .edge)
        edge = InProcessEdge(
            configuration: EdgeServerConfiguration(appID: TestApp.appID, appCertificate: TestApp.certificate, settings: settings),
            node: edgeNode, random: random, logger: LogCapture.logger(label: "edge-1"))
        coordinator.serve(.edgeChannelReport) { [unowned self] request, respond in
            guard let report = try? request.decodeBody(RoomEdgeChannelReport.self) else {
                return respond(.failure(.malformed("not a channel report")))
            }
            reports.append(report)
            respond(.success(RoomEdgeChannelReportResponse.with { answer in
                guard report.hasChannels_p else { return }
                answer.elsewhere = report.channels.compactMap { status in
                    placedElsewhere[status.name].map { edge in
                        RoomChannelElsewhere.with {
                            $0.channel = status.name
                            $0.placedOn = edge
                        }
                    }
                }
            }))
        }
        coordinator.serve(.banList) { [unowned self] _, respond in
            respond(.success(RoomBanListResponse.with { $0.bans = banList }))
        }
        coordinator.serve(.channelClaim) { [unowned self] request, respond in
            guard let body = try? request.decodeBody(RoomClaimChannelRequest.self) else {
                return respond(.failure(.malformed("not a claim")))
            }
            claimed.append(body.channel)
            respond(.success(claimAnswers[body.channel] ?? RoomClaimChannelResponse.with { $0.granted = true }))
        }
    }

    /// A client with its session open.
    func client() throws -> Client {
        let client = Client(edge.connect(), network: network)
        let reply = try client.request(.openSession(clientID: "client-\(client.connection.session)", sdkVersion: "test"))
        if let failure = reply.failure { throw failure }
        return client
    }

    /// Sends `body` as a `kind` request from the coordinator to the edge; the answer envelope.
    func fromCoordinator(_ kind: WireMessageKind, _ body: some SwiftProtobuf.Message) throws -> WireEnvelope {
        try edgeNode.request(try WireEnvelope(request: kind, id: 1, body: body, senderNode: "coord-1"))
    }

    /// Moves the clock in steps of `step`, the clients' sessions kept alive.
    func advance(by interval: Duration, step: Duration = .milliseconds(100), keepAlive: [Client] = []) throws {
        var left = interval
        while left > .zero {
            let move = min(step, left)
            network.advance(by: move)
            left -= move
            for client in keepAlive { _ = try client.request(.heartbeat(clientTime: 0)) }
        }
    }

    /// A client of the in-process edge, speaking the client protocol through `EdgeCodec`.
    final class Client {
        let connection: InProcessEdgeClient
        private let network: InProcessNetwork
        private var nextRequestID: UInt64 = 1
        private var replies: [UInt64: EdgeReply] = [:]
        /// Events received, oldest first.
        private(set) var events: [EdgeEvent] = []
        /// Every message received as it came, oldest first.
        private(set) var messages: [[[UInt8]]] = []
        /// Media frames received, oldest first.
        private(set) var frames: [(header: WireMediaHeader, payload: [UInt8])] = []

        init(_ connection: InProcessEdgeClient, network: InProcessNetwork) {
            self.connection = connection
            self.network = network
        }

        /// Sends a request and returns its reply, once what it leads to on the network settled.
        func request(_ request: EdgeRequest) throws -> EdgeReply {
            let id = try begin(request)
            guard let reply = reply(to: id) else {
                throw ShowroomError.deadlineExceeded("no reply to \(request.kind) (held?)")
            }
            return reply
        }

        /// Sends a request; its reply, if any comes, is ``reply(to:)``'s.
        func begin(_ request: EdgeRequest) throws -> UInt64 {
            let id = nextRequestID
            nextRequestID += 1
            connection.send([try EdgeCodec.envelope(request: request, id: id).serializedBytes()])
            network.run()
            return id
        }

        /// The reply to request `id`, if it came.
        func reply(to id: UInt64) -> EdgeReply? {
            collect()
            return replies.removeValue(forKey: id)
        }

        func join(_ channel: String, uid: UInt32, token: String, role: ClientRole) throws -> EdgeReply {
            try request(.join(channel: channel, uid: uid, token: token, role: role, options: .defaults(for: role)))
        }

        func publish(channel: String, uid: UInt32, track: WireTrackKind = .video, sequence: UInt32, keyframe: Bool, payload: [UInt8]) throws {
            try publish(.testFrame(channel: channel, uid: uid, track: track, sequence: sequence, keyframe: keyframe,
                                   payloadSize: payload.count), payload: payload)
        }

        /// A media frame: the header as given, `payload` as the attachment.
        func publish(_ header: WireMediaHeader, payload: [UInt8]) throws {
            var envelope = WireEnvelope()
            envelope.kind = .mediaFrame
            envelope.body = try header.serializedData()
            connection.send([try envelope.serializedBytes(), payload])
            network.run()
        }

        /// The events received matching `match`, taken out.
        func take(_ match: (EdgeEvent) -> Bool) -> [EdgeEvent] {
            collect()
            let taken = events.filter(match)
            events.removeAll(where: match)
            return taken
        }

        /// Files what the edge sent: replies, events and frames.
        func collect() {
            for message in connection.takeReceived() {
                messages.append(message)
                guard let first = message.first, let envelope = try? WireEnvelope.decode(frame: first) else {
                    XCTFail("the edge sent something unreadable: \(message)")
                    continue
                }
                if envelope.isResponse {
                    replies[envelope.requestID] = try? EdgeCodec.reply(from: envelope)
                } else if envelope.kind == .mediaFrame, let header = try? envelope.decodeBody(WireMediaHeader.self) {
                    frames.append((header, message.count > 1 ? message[1] : []))
                } else if let event = try? EdgeCodec.event(from: envelope) {
                    events.append(event)
                }
            }
        }
    }
}
