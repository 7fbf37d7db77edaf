import FuzzDriver
import FuzzSupport
import Membership
import ShowroomWire

// Gossip bodies from a hostile member, decoded and fed to a `Membership` on a fake clock, as
// MembershipDriver does. Properties checked beyond "does not crash":
// - the local member stays in its own table, alive (nothing a peer says can kill it; it refutes);
// - the table stays sorted by id, without duplicates;
// - everything the state machine sends encodes and decodes again (peers can read it).
// Input: frames as in `FuzzFrames`; each control byte moves the clock (low 6 bits × 25 ms, 0x3F:
// 30 s) and ticks the state machine before the frame's bytes arrive as a gossip body; 0xFF makes
// the local member leave instead.

private let selfID = MemberID("fuzz-self")

@main
enum Fuzzer {
    static func main() {
        runFuzzer { data, size in fuzz(data, size) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var membership = Membership(
        id: selfID, metadata: MemberMetadata(role: "coordinator", clusterEndpoint: "tcp://127.0.0.1:7100"),
        now: .zero, randomSeed: 1)
    var now = Duration.zero
    var left = false
    perform(membership.join(seeds: ["tcp://127.0.0.1:7101"], now: now))
    for frame in FuzzFrames(UnsafeRawBufferPointer(start: data, count: size)) {
        if frame.control == 0xFF, !left {
            left = true
            perform(membership.leave(now: now))
        } else {
            let step = frame.control & 0x3F
            now += step == 0x3F ? .seconds(30) : .milliseconds(25 * Int64(step))
            perform(membership.tick(now: now))
        }
        guard let message = try? GossipCodec.decode([UInt8](frame.bytes)) else { continue }
        perform(membership.receive(message, now: now))
        check(membership, left: left)
    }
    return 0
}

private func perform(_ directives: [MembershipDirective]) {
    for directive in directives {
        guard case .send(let message, let endpoint) = directive else { continue }
        expect(!endpoint.isEmpty, "gossip goes to an endpoint")
        guard let bytes = try? GossipCodec.encode(message) else {
            expect(false, "the state machine's \(message.kind) message encodes")
            return
        }
        expect((try? GossipCodec.decode(bytes)) != nil, "the state machine's \(message.kind) message decodes at its peer")
    }
}

private func check(_ membership: Membership, left: Bool) {
    let local = membership.localMember
    expect(local.id == selfID, "the local member is itself")
    expect(left || local.state == .alive, "no gossip makes the local member \(local.state) (it refutes)")
    let ids = membership.members.map(\.id.rawValue)
    expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "members are sorted by id, each once")
    expect(membership.member(selfID) != nil, "the local member is in its table")
}
