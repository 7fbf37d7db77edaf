import FuzzDriver
import FuzzSupport
import Rooms
import Routing
import ShowroomWire
import SwiftProtobuf

// State batches (COORDINATOR_STATE bodies: replication and catch-up) from another coordinator,
// decoded and merged into a `RoomRegistry`, `PlacementTable`, `ChannelEventSequencer` and
// `BanList` as CoordinatorCore does, then used the way the coordinator goes on to use them: an
// edge's next activity numbered, the rooms ticked, the bans purged. Properties checked beyond
// "does not crash":
// - merging is idempotent: the same batch merged again changes nothing;
// - merging keeps the higher record: a room's version, a channel's last number, a ban's end
//   never go down;
// - the next event of a channel is numbered right after what was merged.
// Input: frames as in `FuzzFrames`, each a batch; each control byte moves the clock (× 10 s).

@main
enum Fuzzer {
    static func main() {
        runFuzzer { data, size in fuzz(data, size) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var state = FuzzState()
    for frame in FuzzFrames(UnsafeRawBufferPointer(start: data, count: size)) {
        state.nowMs += Int64(frame.control) * 10_000
        guard let batch = try? RoomStateBatch(serializedBytes: [UInt8](frame.bytes)) else { continue }
        state.merge(batch)
    }
    return 0
}

struct FuzzState {
    var registry = RoomRegistry()
    var placements = PlacementTable()
    var sequencer = ChannelEventSequencer()
    var bans = BanList()
    var nowMs: Int64 = 1_700_000_000_000

    mutating func merge(_ batch: RoomStateBatch) {
        let versions = Dictionary(batch.rooms.map { ($0.roomID, registry.room($0.roomID)?.version ?? 0) }) { a, _ in a }
        let numbers = Dictionary(batch.sequences.map {
            let held = sequencer.sequence(of: $0.channel)
            return ($0.channel, (held.series, held.lastSequence))
        }) { a, _ in a }
        let ends = Dictionary(batch.bans.map { (BanKey($0), bans.bans[BanKey($0)]?.untilMs ?? .min) }) { a, _ in a }

        _ = registry.merge(rooms: batch.rooms, messages: batch.messages)
        _ = placements.merge(batch.placements)
        _ = sequencer.merge(batch.sequences, nowMs: nowMs)
        _ = bans.merge(batch.bans)

        expect(registry.merge(rooms: batch.rooms, messages: batch.messages).isEmpty, "rooms merged twice change nothing")
        // A batch may hold a channel's placement and its removal: merged again, the table ends
        // the same, though the merge reports taking them again.
        let placed = placements.placements
        _ = placements.merge(batch.placements)
        expect(placements.placements == placed, "placements merged twice end the same")
        expect(sequencer.merge(batch.sequences, nowMs: nowMs).isEmpty, "sequences merged twice change nothing")
        expect(bans.merge(batch.bans).isEmpty, "bans merged twice change nothing")

        for (roomID, version) in versions where !roomID.isEmpty {
            expect((registry.room(roomID)?.version ?? 0) >= version, "room \(roomID)'s version never goes down")
        }
        for (channel, number) in numbers where !channel.isEmpty {
            let held = sequencer.sequence(of: channel)
            expect((held.series, held.lastSequence) >= number, "channel \(channel)'s series and last number never go back")
        }
        for (key, end) in ends where !key.channel.isEmpty {
            expect((bans.bans[key]?.untilMs ?? .min) >= end, "a ban's end never comes earlier")
        }
        // (A placement without an edge removes the channel's; the table also has a size bound.)
        expect(placements.placements.allSatisfy { $0.key == $0.value.channel && !$0.value.edgeID.isEmpty },
               "every placement is filed under its channel and names an edge")

        // What the coordinator does next with that state: number an edge's activity in each
        // channel it learned of, tick the rooms, hand the tables on.
        for sequence in batch.sequences where !sequence.channel.isEmpty {
            let before = sequencer.sequence(of: sequence.channel).lastSequence
            var activity = RoomChannelActivity()
            activity.channel = sequence.channel
            activity.type = .audienceJoined
            activity.uid = 7
            if let event = sequencer.number(activity, edge: "edge-1", nowMs: nowMs) {
                expect(event.sequence > before, "the next event of \(sequence.channel) comes after \(before)")
            }
        }
        _ = registry.tick(nowMs: nowMs)
        _ = bans.purge(nowMs: nowMs)
        var handOver = RoomStateBatch()
        handOver.placements = Array(placements.placements.values)
        handOver.sequences = sequencer.sequences
        handOver.bans = bans.active(nowMs: nowMs)
        expect((try? handOver.serializedBytes() as [UInt8]) != nil, "the tables encode for a hand-over")
    }
}
