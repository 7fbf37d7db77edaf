import FuzzDriver
import FuzzSupport
import Rooms
import Routing
import ShowroomWire
import SwiftProtobuf

// Room requests from hostile clients, decoded as the coordinator does and applied to a
// `RoomRegistry`, a `PlacementTable` and a `ChannelEventSequencer` (edge reports) on a fake
// clock. Properties checked beyond "does not crash":
// - a change the registry reports is what it now holds for that room (unless purged);
// - a page of rooms is newest first and no longer than asked;
// - a placement is on an alive edge, not on the edge a client could not reach while another is
//   alive, and it is what the table holds;
// - event numbers of a channel go up by one;
// - every answer encodes for the wire.
// Input: frames as in `FuzzFrames`; each control byte moves the clock (× 5 s; 255 s per step at
// most, so rooms expire and owners' grace runs out) and ticks the registry first.

private let edges = ["edge-1", "edge-2", "edge-3"]

@main
enum Fuzzer {
    static func main() {
        runFuzzer { data, size in fuzz(data, size) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var coordinator = FuzzCoordinator()
    for frame in FuzzFrames(UnsafeRawBufferPointer(start: data, count: size)) {
        coordinator.nowMs += Int64(frame.control) * 5_000
        for change in coordinator.registry.tick(nowMs: coordinator.nowMs) { coordinator.check(change) }
        guard let envelope = try? WireEnvelope.decode(frame: frame.bytes), !envelope.isResponse else { continue }
        coordinator.serve(envelope)
    }
    return 0
}

struct FuzzCoordinator {
    var registry = RoomRegistry()
    var placements = PlacementTable()
    var sequencer = ChannelEventSequencer()
    var nowMs: Int64 = 1_700_000_000_000
    var random = FuzzRandom()

    mutating func serve(_ envelope: WireEnvelope) {
        do throws(ShowroomError) {
            switch envelope.kind {
            case .roomCreate:
                // Apply first: `check` must see the registry after the change.
                let change = try registry.create(try envelope.decodeBody(RoomCreateRoomRequest.self), nowMs: nowMs, using: &random)
                check(change)
            case .roomList:
                let request = try envelope.decodeBody(RoomListRoomsRequest.self)
                let page = try registry.list(request)
                let limit = request.pageSize == 0 ? 20 : Int(request.pageSize)
                expect(page.rooms.count <= limit, "a page holds at most \(limit) rooms, got \(page.rooms.count)")
                expect(zip(page.rooms, page.rooms.dropFirst()).allSatisfy { $0.createdAtMs >= $1.createdAtMs },
                       "a page is newest first")
                encodes(page)
            case .roomGet:
                encodes(try registry.get(try envelope.decodeBody(RoomGetRoomRequest.self)))
            case .roomJoin:
                // Apply first: `check` must see the registry after the change.
                let change = try registry.join(try envelope.decodeBody(RoomJoinRoomRequest.self), nowMs: nowMs)
                check(change)
            case .roomLeave:
                // Apply first: `check` must see the registry after the change.
                let change = try registry.leave(try envelope.decodeBody(RoomLeaveRoomRequest.self), nowMs: nowMs)
                check(change)
            case .roomClose:
                let request = try envelope.decodeBody(RoomCloseRoomRequest.self)
                // The signature check is the shell's; a signed request stands for a valid one here.
                // Apply first: `check` must see the registry after the change.
                let change = try registry.close(request, byAdmin: request.hasAdmin, nowMs: nowMs)
                check(change)
            case .roomChatSend:
                // Apply first: `check` must see the registry after the change.
                let change = try registry.sendChat(try envelope.decodeBody(RoomSendChatRequest.self), nowMs: nowMs)
                check(change)
            case .roomChatHistory:
                encodes(try registry.history(try envelope.decodeBody(RoomChatHistoryRequest.self)))
            case .channelPlace:
                try place(try envelope.decodeBody(RoomPlaceChannelRequest.self))
            case .edgeChannelReport:
                report(try envelope.decodeBody(RoomEdgeChannelReport.self))
            default:
                break
            }
        } catch {
            expect(!error.message.isEmpty, "a refusal says why (\(error.code))")
            expect(WireEnvelope(responseTo: envelope, error: error).failure == error, "a refusal survives encoding")
        }
    }

    mutating func place(_ request: RoomPlaceChannelRequest) throws(ShowroomError) {
        let avoiding = request.unreachableEdge.isEmpty ? nil : request.unreachableEdge
        let (placement, _) = try placements.place(
            channel: request.channel, edges: OwnerRing(.edge, memberIDs: edges), loads: placements.channelsPerEdge,
            avoiding: avoiding, nowMs: nowMs)
        expect(edges.contains(placement.edgeID), "a channel is placed on an alive edge, not \(placement.edgeID)")
        expect(placement.edgeID != avoiding, "a channel is not placed on the edge its client could not reach")
        expect(placements.placements[request.channel] == placement, "the table holds the placement answered")
        encodes(placement)
    }

    mutating func report(_ report: RoomEdgeChannelReport) {
        for activity in report.activities {
            let before = sequencer.sequence(of: activity.channel).lastSequence
            guard let event = sequencer.number(activity, edge: report.edgeID, nowMs: nowMs) else { continue }
            expect(event.sequence == before &+ 1, "channel \(activity.channel) events are numbered one after another")
            encodes(event)
            let present: Bool
            switch activity.type {
            case .broadcasterJoined, .roleToBroadcaster, .audienceJoined: present = true
            case .broadcasterLeft, .audienceLeft, .roleToAudience: present = false
            default: continue
            }
            for change in registry.ownerPresence(channel: activity.channel, uid: activity.uid, present: present, nowMs: nowMs) {
                check(change)
            }
        }
    }

    func check(_ change: RoomChange) {
        if !change.purged {
            expect(registry.room(change.room.roomID) == change.room, "room \(change.room.roomID) is held as the change says")
        }
        encodes(change.room)
        if let message = change.message { encodes(message) }
    }

    func encodes(_ message: some SwiftProtobuf.Message) {
        expect((try? message.serializedBytes() as [UInt8]) != nil, "\(type(of: message)) encodes")
    }
}
