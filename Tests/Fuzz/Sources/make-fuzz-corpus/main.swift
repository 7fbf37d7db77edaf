import Edge
import Foundation
import FuzzSupport
import Membership
import Rooms
import ShowroomWire
import SwiftProtobuf

// Writes the seed corpus, Corpus/<target>/<name>, from messages built with the project's own
// encoders: the traffic each fuzz target's decoder sees in a running cluster. Run again after the
// contract changes:
//     swift run --package-path Tests/Fuzz --scratch-path Tests/Fuzz/.build/plain make-fuzz-corpus
// (a plain build: the fuzz targets' build links libFuzzer's main, which this tool must not have).

let corpus = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Corpus")

func write(_ target: String, _ name: String, _ frames: [(control: UInt8, bytes: [UInt8])]) throws {
    let folder = corpus.appendingPathComponent(target)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(FuzzFrames.encode(frames)).write(to: folder.appendingPathComponent(name))
}

func frame<Body: SwiftProtobuf.Message>(_ kind: WireMessageKind, _ id: UInt64, _ body: Body) throws -> [UInt8] {
    try WireEnvelope(request: kind, id: id, body: body, senderNode: "edge-1").serializedBytes()
}

func edgeFrame(_ request: EdgeRequest, _ id: UInt64) throws -> [UInt8] {
    try EdgeCodec.envelope(request: request, id: id).serializedBytes()
}

// MARK: - Gossip

let me = MemberAddress(id: MemberID("coordinator-2"), endpoint: "tcp://127.0.0.1:7101")
func metadata(_ role: String, _ port: Int) -> MemberMetadata {
    MemberMetadata(role: role, clusterEndpoint: "tcp://127.0.0.1:\(port)", clientEndpoint: role == "edge" ? "tcp://127.0.0.1:\(port + 100)" : "",
                   adminEndpoint: "http://127.0.0.1:\(port + 200)", version: "1.0.0",
                   load: MemberLoad(channels: 3, connections: 12, cpuPercent: 4.5))
}
let updates = [
    MemberUpdate(id: MemberID("coordinator-2"), state: .alive, incarnation: 2, metadata: metadata("coordinator", 7101)),
    MemberUpdate(id: MemberID("edge-1"), state: .alive, incarnation: 0, metadata: metadata("edge", 7120)),
    MemberUpdate(id: MemberID("edge-2"), state: .suspect, incarnation: 1, from: MemberID("coordinator-2")),
    MemberUpdate(id: MemberID("fuzz-self"), state: .suspect, incarnation: 0, from: MemberID("edge-1")),
    MemberUpdate(id: MemberID("callsignal-1"), state: .dead, incarnation: 4, from: MemberID("edge-1")),
]
let gossip: [(String, GossipMessage)] = [
    ("ping", .ping(.init(sender: me, sequence: 17, target: MemberID("fuzz-self"), updates: updates))),
    ("ping-request", .pingRequest(.init(sender: me, sequence: 18, target: MemberAddress(id: MemberID("edge-1"), endpoint: "tcp://127.0.0.1:7120"), updates: updates))),
    ("ack", .ack(.init(sender: me, sequence: 1, updates: Array(updates.prefix(2))))),
    ("nack", .nack(.init(sender: me, sequence: 18))),
    ("push-pull-join", .pushPull(.init(sender: me, isReply: false, isJoin: true, members: [updates[0], updates[1]]))),
    ("broadcast", .broadcast(.init(sender: me, updates: updates))),
]
var gossipFrames: [(control: UInt8, bytes: [UInt8])] = []
for (name, message) in gossip {
    let body = try GossipCodec.encode(message)
    try write("gossip", name, [(control: 4, bytes: body)])
    gossipFrames.append((control: 10, bytes: body))
    var envelope = WireEnvelope()
    envelope.kind = .gossip
    envelope.senderNode = "coordinator-2"
    envelope.body = Data(body)
    try write("envelope", "gossip-\(name)", [(control: 0, bytes: try envelope.serializedBytes())])
}
try write("gossip", "conversation", gossipFrames + [(control: 0x3F, bytes: []), (control: 0xFF, bytes: [])])

// MARK: - Edge sessions

let token = "p3600"
var header = WireMediaHeader()
header.channel = "show-1"
header.publisherUid = 42
header.track = .video
header.keyframe = true
header.captureTimeUs = 1_700_000_000_000_000
let keyframe = try frame(.mediaFrame, 0, header)
header.keyframe = false
let delta = try frame(.mediaFrame, 0, header)
header.track = .audio
header.audioLevel = 63
let audio = try frame(.mediaFrame, 0, header)
let vp8Keyframe = [UInt8](repeating: 0x9D, count: 12_000)  // a VP8 keyframe at 640×360 is ~12 KB
let vp8Delta = [UInt8](repeating: 0x31, count: 1_400)
let opus = [UInt8](repeating: 0x78, count: 120)
var ban = RoomBan()
ban.channel = "show-1"
ban.uid = 7
ban.privileges = [1]
ban.untilMs = 1_700_000_060_000
let bans = try frame(.edgeBans, 9, RoomEdgeBansRequest.with { $0.bans = [ban] })

let host: UInt8 = 0, viewer: UInt8 = 1, slow: UInt8 = 3
let show: [(control: UInt8, bytes: [UInt8])] = [
    (host, try edgeFrame(.openSession(clientID: "host-42", sdkVersion: "1.0.0"), 1)),
    (host, try edgeFrame(.join(channel: "show-1", uid: 42, token: token, role: .broadcaster, options: .defaults(for: .broadcaster)), 2)),
    (viewer, try edgeFrame(.openSession(clientID: "viewer-7", sdkVersion: "1.0.0"), 1)),
    (viewer, try edgeFrame(.join(channel: "show-1", uid: 7, token: "s3600", role: .audience, options: .defaults(for: .audience)), 2)),
    (slow, try edgeFrame(.openSession(clientID: "viewer-8", sdkVersion: "1.0.0"), 1)),
    (slow, try edgeFrame(.join(channel: "show-1", uid: 8, token: "s", role: .audience, options: .defaults(for: .audience)), 2)),
    (host | 4 << 2, keyframe), (host, vp8Keyframe),
    (host | 3 << 2, delta), (host, vp8Delta),
    (host | 2 << 2, audio), (host, opus),
    (viewer, try edgeFrame(.enableVolumeIndication(VolumeIndicationConfig(interval: .milliseconds(200), smoothing: 3, reportVAD: true)), 3)),
    (viewer, try edgeFrame(.muteRemote(TrackID(channel: "show-1", uid: 42, kind: .video), muted: true), 4)),
    (host, try edgeFrame(.sendStreamMessage(channel: "show-1", streamID: 1, data: Array("hello".utf8)), 0)),
    (host, try edgeFrame(.renewToken(channel: "show-1", token: "p7200"), 5)),
    (viewer, try edgeFrame(.setRole(channel: "show-1", role: .broadcaster), 5)),
    (viewer | 63 << 2, try edgeFrame(.heartbeat(clientTime: 123_456), 6)),
    (host, bans),
    (host, try edgeFrame(.leave(channel: "show-1"), 6)),
    (host, try edgeFrame(.closeSession, 7)),
]
try write("edge-session", "show", show)
try write("edge-session", "join-with-token", Array(show.prefix(2)))
try write("edge-session", "media-keyframe", Array(show.prefix(2)) + [show[6], show[7]])
for (index, (_, bytes)) in show.enumerated() where bytes.count < 2_000 {
    try write("envelope", "edge-\(index)", [(control: 0, bytes: bytes)])
}
try write("envelope", "media-header", [(control: 0, bytes: keyframe)])

// Replies and events as a client receives them.
let replies: [EdgeReply] = [
    EdgeReply(requestID: 2, kind: .join, result: .failure(ShowroomError(.tokenExpired, "the token expired; renew it"))),
]
for (index, reply) in replies.enumerated() {
    try write("envelope", "reply-\(index)", [(control: 0, bytes: try EdgeCodec.envelope(reply: reply).serializedBytes())])
}
let events: [EdgeEvent] = [
    .userJoined(channel: "show-1", uid: 42),
    .remoteTrackPublished(TrackID(channel: "show-1", uid: 42, kind: .video)),
]
for (index, event) in events.enumerated() {
    try write("envelope", "event-\(index)", [(control: 0, bytes: try EdgeCodec.envelope(event: event).serializedBytes())])
}

// MARK: - Room requests

var create = RoomCreateRoomRequest()
create.name = "Friday show"
create.ownerUid = 42
create.roomID = "friday-show"
var join = RoomJoinRoomRequest()
join.roomID = "friday-show"
join.uid = 7
var chat = RoomSendChatRequest()
chat.roomID = "friday-show"
chat.uid = 7
chat.text = "hello from the front row"
var history = RoomChatHistoryRequest()
history.roomID = "friday-show"
var list = RoomListRoomsRequest()
list.pageSize = 10
var place = RoomPlaceChannelRequest()
place.channel = "friday-show"
place.uid = 7
place.token = "007eJxTYBBbsfq7Zp"
var replace = place
replace.unreachableEdge = "edge-1"
var report = RoomEdgeChannelReport()
report.edgeID = "edge-1"
var activity = RoomChannelActivity()
activity.channel = "friday-show"
activity.type = .broadcasterJoined
activity.uid = 42
activity.atMs = 1_700_000_000_000
activity.origin = "edge-1/run-1"
activity.originSequence = 1
report.activities = [activity]
var leave = RoomLeaveRoomRequest()
leave.roomID = "friday-show"
leave.uid = 7
var close = RoomCloseRoomRequest()
close.roomID = "friday-show"
close.uid = 42
let rooms: [(String, [UInt8])] = [
    ("create", try frame(.roomCreate, 1, create)),
    ("join", try frame(.roomJoin, 2, join)),
    ("chat", try frame(.roomChatSend, 3, chat)),
    ("history", try frame(.roomChatHistory, 4, history)),
    ("list", try frame(.roomList, 5, list)),
    ("get", try frame(.roomGet, 6, RoomGetRoomRequest.with { $0.roomID = "friday-show" })),
    ("place", try frame(.channelPlace, 7, place)),
    ("place-elsewhere", try frame(.channelPlace, 8, replace)),
    ("edge-report", try frame(.edgeChannelReport, 9, report)),
    ("leave", try frame(.roomLeave, 10, leave)),
    ("close", try frame(.roomClose, 11, close)),
]
for (name, bytes) in rooms {
    try write("room-requests", name, [(control: 0, bytes: bytes)])
    try write("envelope", "room-\(name)", [(control: 0, bytes: bytes)])
}
try write("room-requests", "room-life", rooms.map { (control: UInt8(2), bytes: $0.1) } + [(control: 250, bytes: rooms[4].1)])

// MARK: - State batches

var registry = RoomRegistry()
var random = FuzzRandom()
let created = try registry.create(create, nowMs: 1_700_000_000_000, using: &random)
let joined = try registry.join(join, nowMs: 1_700_000_001_000)
let said = try registry.sendChat(chat, nowMs: 1_700_000_002_000)
var second = create
second.roomID = "late-show"
second.name = "Late show"
second.ownerUid = 43
let other = try registry.create(second, nowMs: 1_700_000_003_000, using: &random)
var placement = RoomChannelPlacement()
placement.channel = "friday-show"
placement.edgeID = "edge-1"
placement.placedAtMs = 1_700_000_000_500
var sequences = ChannelEventSequencer()
_ = sequences.number(activity, edge: "edge-1", nowMs: 1_700_000_000_600)
var batch = RoomStateBatch()
batch.rooms = [created.room, joined.room, other.room]
batch.messages = said.message.map { [$0] } ?? []
batch.placements = [placement]
batch.sequences = sequences.sequences
batch.bans = [ban]
var replication = RoomStateBatch()
replication.rooms = [said.room]
replication.messages = batch.messages
try write("state-batch", "catch-up", [(control: 0, bytes: try batch.serializedBytes())])
try write("state-batch", "replication", [(control: 1, bytes: try replication.serializedBytes())])
try write("state-batch", "catch-up-then-replication",
          [(control: 0, bytes: try batch.serializedBytes()), (control: 30, bytes: try replication.serializedBytes())])
try write("envelope", "state-batch", [(control: 0, bytes: try frame(.coordinatorState, 1, batch))])

print("corpus written to \(corpus.path)")
