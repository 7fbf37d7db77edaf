import Edge
import FuzzDriver
import FuzzSupport
import ShowroomWire

// Client sessions on an edge: every frame a client (or a coordinator's EDGE_BANS) can send,
// decoded as the edge shell does and handed to a `ChannelPlane` on a fake clock; media frames
// carry their payload in the next frame. Properties checked beyond "does not crash":
// - a request with a request id gets exactly one reply, with that id, to its sender; a one-way
//   request gets none;
// - every reply and event the plane produces encodes for the wire, and a reply decodes back to
//   itself on the client side; every reported activity encodes for the coordinator;
// - the plane's tables stay consistent: every connection belongs to an open session, no channel
//   is empty, the connection count is the sum over channels, and the books agree both ways
//   (`ChannelPlane.inconsistencies`: a session lists only channels that hold it).
// Input: frames as in `FuzzFrames`. Control byte: bits 0–1 pick the sending session (1–4; session
// 4's queue is always full), bits 2–7 move the clock (× 10 ms; 63: 40 s, past heartbeat and
// token deadlines) and tick the plane first.
// Tokens are checked by a stand-in verifier: "" is refused, "p…" grants a publisher, "s…" a
// subscriber, "x…" a publisher whose privileges have expired; digits after the letter set the
// expiry in seconds from now (none: never). Sessions 1–2 connect from 10.0.0.1, 3–4 from 10.0.0.2
// (what an address ban matches).

typealias Frame = UInt32

@main
enum Fuzzer {
    static func main() {
        runFuzzer { data, size in fuzz(data, size) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var edge = FuzzEdge()
    var frames = FuzzFrames(UnsafeRawBufferPointer(start: data, count: size))
    while let frame = frames.next() {
        let session = SessionID(UInt64(frame.control & 0x03) + 1)
        let step = frame.control >> 2
        edge.now += step == 63 ? .seconds(40) : .milliseconds(10 * Int64(step))
        edge.run(edge.plane.tick(now: edge.now))
        guard let envelope = try? WireEnvelope.decode(frame: frame.bytes) else { continue }
        switch envelope.kind {
        case .mediaFrame:
            let payload = frames.next()?.bytes.count ?? 0
            guard let header = try? envelope.decodeBody(WireMediaHeader.self) else { continue }
            // As the edge does: the header is checked first, a refused one never reaches forwarding.
            do {
                edge.forward(try EdgeCodec.checkedFrameInfo(header: header, payloadSize: payload), from: session)
            } catch {
                edge.run(edge.plane.refuseFrame(error, channel: "", track: nil, from: session, now: edge.now))
            }
        case .edgeBans:
            guard let request = try? envelope.decodeBody(RoomEdgeBansRequest.self),
                let bans = try? EdgeCodec.bans(request.bans, now: edge.now, unixNowMs: 1_700_000_000_000)
            else { continue }
            edge.run(edge.plane.applyBans(bans, now: edge.now).directives)
        default:
            guard let request = try? EdgeCodec.request(from: envelope) else { continue }
            let directives = edge.plane.handle(
                request, from: session, requestID: envelope.requestID, now: edge.now, verifyToken: edge.verify)
            let replies = directives.compactMap { directive -> (EdgeReply, SessionID)? in
                if case .reply(let reply, let to) = directive { (reply, to) } else { nil }
            }
            if envelope.requestID == 0 {
                expect(replies.isEmpty, "a one-way \(request.kind) gets no reply")
            } else {
                expect(replies.count == 1, "a \(request.kind) request gets one reply, got \(replies.count)")
                expect(replies.allSatisfy { $0.0.requestID == envelope.requestID && $0.1 == session },
                       "the reply to a \(request.kind) request goes to its sender with its id")
            }
            edge.run(directives)
            // As the shell does once a session is open: its client's address, two clients a host.
            if case .openSession = request { edge.plane.setAddress(session.rawValue <= 2 ? "10.0.0.1" : "10.0.0.2", of: session) }
        }
        edge.check()
    }
    return 0
}

/// The plane with a fake clock and network, carrying out directives the way the edge shell does.
struct FuzzEdge {
    var plane = ChannelPlane<Frame>()
    var now = Duration.zero
    var nextFrame: Frame = 0

    func verify(_ token: String, _ channel: String, _ uid: UInt32) -> Result<ChannelGrant, ShowroomError> {
        guard let kind = token.first else {
            return .failure(ShowroomError(.tokenMalformed, "empty token"))
        }
        let seconds = Int64(token.dropFirst().prefix(6).filter(\.isNumber)) ?? -1
        let expiry: Expiry = seconds < 0 ? .never : .at(now + .seconds(seconds))
        switch kind {
        case "p": return .success(.publisher(channel: channel, uid: uid, expiry: expiry))
        case "s": return .success(.subscriber(channel: channel, uid: uid, expiry: expiry))
        case "w": return .success(.publisher(expiry: expiry))
        case "x": return .success(.publisher(channel: channel, uid: uid, expiry: .at(now - .seconds(1))))
        default: return .failure(ShowroomError(.tokenBadSignature, "bad signature"))
        }
    }

    mutating func forward(_ info: MediaFrameInfo, from session: SessionID) {
        nextFrame &+= 1
        let directives = plane.forward(nextFrame, info: info, from: session, now: now, send: Self.deliver)
        run(directives)
    }

    static func deliver(to session: SessionID, _ frame: Frame) -> DeliveryOutcome {
        session == SessionID(4) ? .wouldBlock : .sent
    }

    mutating func run(_ directives: [EdgeDirective]) {
        for directive in directives {
            switch directive {
            case .reply(let reply, _):
                guard let envelope = try? EdgeCodec.envelope(reply: reply) else {
                    expect(false, "a reply encodes: \(reply)")
                    continue
                }
                expect((try? EdgeCodec.reply(from: envelope)) == reply, "a reply decodes back to itself: \(reply)")
            case .send(let event, _):
                expect((try? EdgeCodec.envelope(event: event)) != nil, "an event encodes: \(event)")
            case .sendCachedFrames(let track, let session):
                run(plane.sendCachedFrames(track, to: session, now: now, send: Self.deliver))
            case .report(let activity):
                _ = EdgeCodec.wire(activity, atMs: 1_700_000_000_000)
            case .requestKeyframe(let track, _):
                expect((try? EdgeCodec.keyframeRequest(for: track)) != nil, "a keyframe request encodes")
            case .closeSession, .log:
                break
            }
        }
    }

    func check() {
        var connections = 0
        for name in plane.channelNames {
            guard let channel = plane.channel(name) else {
                expect(false, "a listed channel \(name) exists")
                continue
            }
            expect(!channel.connections.isEmpty, "channel \(name) has someone in it")
            for connection in channel.connections {
                expect(plane.session(connection.session) != nil, "a connection in \(name) belongs to an open session")
                expect(connection.channel == name, "a connection in \(name) names its channel")
            }
            connections += channel.connections.count
        }
        expect(connections == plane.connectionCount, "the connection count is the sum over channels")
        let wrong = plane.inconsistencies
        expect(wrong.isEmpty, "the plane's books agree: \(wrong.joined(separator: "; "))")
        expect(plane.sessionCount <= 4, "only the four fuzzed sessions exist")
    }
}
