// The generated JavaScript protobuf module (Sources/ShowroomWeb/sdk/proto/): its API, round trips
// of every package, cross-checks against protoc in both directions, every scalar, map key and
// oneof shape (a fixture .proto generated here), and hostile input.
//
//   node Tests/Web/proto.test.mjs        (Node 20.19+ or 22+; protoc and python3 on PATH)
//
// Tests/Web/check-generated-js.sh runs it after checking the committed code is current.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const protoDir = path.join(root, 'proto');
const sdkProto = path.join(root, 'Sources/ShowroomWeb/sdk/proto');
const { showroom } = await import(pathToFileURL(path.join(sdkProto, 'showroom.js')).href);
const { wire, edge, room, call, admin, membership } = showroom;

// --- protoc ---------------------------------------------------------------------------------------

function protoc(includeDir, args, input) {
    const r = spawnSync('protoc', ['--proto_path=.', ...args], { cwd: includeDir, input, maxBuffer: 1 << 24 });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`protoc ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
}
const protocDecode = (dir, file, type, bytes) => protoc(dir, [`--decode=${type}`, file], bytes).toString('utf8');
const protocEncode = (dir, file, type, text) => new Uint8Array(protoc(dir, [`--encode=${type}`, file], text));

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const utf8 = (s) => new TextEncoder().encode(s);
// protoc's text format writes non-ASCII string bytes as octal escapes.
const octal = (s) => [...utf8(s)].map((b) => (b < 128 ? String.fromCharCode(b) : `\\${b.toString(8)}`)).join('');

/**
 * One cross-check: JS encodes `value` and protoc prints exactly `text`; protoc encodes `text` and
 * JS decodes it to what it decoded from its own bytes. With `sameBytes` (no map of two entries,
 * whose order protoc does not fix), protoc's bytes equal JS's.
 */
function crossCheck(dir, file, T, value, text, { sameBytes = true } = {}) {
    const bytes = T.encode(value);
    assert.equal(protocDecode(dir, file, T.typeName, bytes), text, `protoc --decode=${T.typeName}`);
    const fromProtoc = protocEncode(dir, file, T.typeName, text);
    if (sameBytes) assert.equal(hex(fromProtoc), hex(bytes), `protoc --encode=${T.typeName} bytes`);
    const decoded = T.decode(fromProtoc);
    assert.deepEqual(decoded, T.decode(bytes));
    return decoded;
}

// --- samples, every level built with create() so that a round trip gives them back exactly ---------

const envelope = wire.Envelope.create({
    kind: wire.MessageKind.MESSAGE_KIND_EDGE_OPEN_SESSION,
    requestId: 18446744073709551615n, // 2^64 - 1
    isResponse: true,
    senderNode: 'edge-1 ✓ 你好 🎥',
    error: wire.Error.create({
        code: wire.ErrorCode.ERROR_CODE_CHANNEL_ELSEWHERE,
        message: 'go "there"\n',
        redirect: wire.Redirect.create({ edgeId: 'e2', clientEndpoint: 'tcp://10.0.0.2:7800' }),
    }),
    body: new Uint8Array([0, 1, 2, 255, 128]),
    deadlineMs: 4294967295,
    protocolVersion: 1,
    forwarded: true,
});
const envelopeText = `kind: MESSAGE_KIND_EDGE_OPEN_SESSION
request_id: 18446744073709551615
is_response: true
sender_node: "${octal('edge-1 ✓ 你好 🎥')}"
error {
  code: ERROR_CODE_CHANNEL_ELSEWHERE
  message: "go \\"there\\"\\n"
  redirect {
    edge_id: "e2"
    client_endpoint: "tcp://10.0.0.2:7800"
  }
}
body: "\\000\\001\\002\\377\\200"
deadline_ms: 4294967295
protocol_version: 1
forwarded: true
`;

const mediaHeader = wire.MediaHeader.create({
    channel: 'room-1',
    publisherUid: 4000000000,
    track: wire.TrackKind.TRACK_KIND_VIDEO,
    codec: wire.Codec.CODEC_VP8,
    sequence: 77,
    captureTimeUs: 9007199254740993n, // 2^53 + 1: not a safe Number
    keyframe: true,
    audioLevel: 0,
    width: 1280,
    height: 720,
    payloadSize: 65536,
    sendTimeUs: 9007199254740995n,
    alsoChannels: ['room-2', 'room-3'],
});
const mediaHeaderText = `channel: "room-1"
publisher_uid: 4000000000
track: TRACK_KIND_VIDEO
codec: CODEC_VP8
sequence: 77
capture_time_us: 9007199254740993
keyframe: true
width: 1280
height: 720
payload_size: 65536
send_time_us: 9007199254740995
also_channels: "room-2"
also_channels: "room-3"
`;

const openSession = edge.OpenSessionRequest.create({ clientId: 'browser-7f3a', sdkVersion: 'web/1.0.0-β' });
const openSessionText = `client_id: "browser-7f3a"
sdk_version: "${octal('web/1.0.0-β')}"
`;

const roomSample = room.Room.create({
    roomId: 'r1',
    name: 'Live ♫',
    ownerUid: 42,
    createdAtMs: -1n, // negative int64: a 10-byte varint
    audienceCount: 3,
    state: room.RoomState.ROOM_STATE_OPEN,
    ownerOfflineSinceMs: -9007199254740993n,
    version: 12345678901234567890n,
    audienceUids: [1, 2, 300, 4294967295], // packed
    interaction: room.RoomInteraction.create({
        kind: room.RoomInteractionKind.ROOM_INTERACTION_KIND_COHOST,
        sinceMs: 1700000000000n,
        seats: [
            room.CoHostSeat.create({ uid: 7, userName: 'a', id: 's1', sinceMs: 1n }),
            room.CoHostSeat.create({ uid: 8, userName: 'b', id: 's2' }),
        ],
    }),
    pending: [
        room.RoomPendingRequest.create({
            id: 'p1',
            kind: room.RoomRequestKind.ROOM_REQUEST_KIND_PK_INVITATION,
            fromUid: 9,
            mediaMode: room.PkMediaMode.PK_MEDIA_MODE_SUBSCRIBE,
        }),
    ],
    seats: 4,
});
const roomText = `room_id: "r1"
name: "${octal('Live ♫')}"
owner_uid: 42
created_at_ms: -1
audience_count: 3
state: ROOM_STATE_OPEN
owner_offline_since_ms: -9007199254740993
version: 12345678901234567890
audience_uids: 1
audience_uids: 2
audience_uids: 300
audience_uids: 4294967295
interaction {
  kind: ROOM_INTERACTION_KIND_COHOST
  since_ms: 1700000000000
  seats {
    uid: 7
    user_name: "a"
    id: "s1"
    since_ms: 1
  }
  seats {
    uid: 8
    user_name: "b"
    id: "s2"
  }
}
pending {
  id: "p1"
  kind: ROOM_REQUEST_KIND_PK_INVITATION
  from_uid: 9
  media_mode: PK_MEDIA_MODE_SUBSCRIBE
}
seats: 4
`;

const callRecord = call.CallRecord.create({
    callId: 'call-9',
    caller: 1,
    callee: 2,
    type: call.CallType.CALL_TYPE_AUDIO,
    extension: { b: '2', a: 'ü', '': 'empty key' },
    firstFrames: [2, 1],
    absentSince: { 0: 0n, 7: -1n, 4294967295: 9007199254740993n },
    liveRooms: { 1: '', 2: 'room-2' },
    sequence: 18446744073709551615n,
});
const callRecordText = `call_id: "call-9"
caller: 1
callee: 2
type: CALL_TYPE_AUDIO
extension {
  key: ""
  value: "empty key"
}
extension {
  key: "a"
  value: "\\303\\274"
}
extension {
  key: "b"
  value: "2"
}
sequence: 18446744073709551615
first_frames: 2
first_frames: 1
absent_since {
  key: 0
  value: 0
}
absent_since {
  key: 7
  value: -1
}
absent_since {
  key: 4294967295
  value: 9007199254740993
}
live_rooms {
  key: 1
  value: ""
}
live_rooms {
  key: 2
  value: "room-2"
}
`;

const clusterStatus = admin.ClusterStatus.create({
    reporter: 'coord-1',
    members: [
        admin.MemberStatus.create({
            id: 'edge-1',
            role: 'edge',
            state: membership.MemberState.MEMBER_STATE_SUSPECT,
            clusterEndpoint: 'tcp://10.0.0.1:7700',
            incarnation: 9223372036854775807n,
            load: membership.Load.create({ channels: 5, connections: 1000, cpuPercent: 12.5 }),
            lastHeardMsAgo: 250n,
        }),
        admin.MemberStatus.create({ id: 'coord-1', role: 'coordinator', state: membership.MemberState.MEMBER_STATE_ALIVE }),
    ],
    reporterTraffic: admin.GossipTraffic.create({ messagesSent: 1n, bytesReceived: 1n << 40n, elapsedMs: 60000n }),
    reporterLocalHealth: 2,
});
const clusterStatusText = `reporter: "coord-1"
members {
  id: "edge-1"
  role: "edge"
  state: MEMBER_STATE_SUSPECT
  cluster_endpoint: "tcp://10.0.0.1:7700"
  incarnation: 9223372036854775807
  load {
    channels: 5
    connections: 1000
    cpu_percent: 12.5
  }
  last_heard_ms_ago: 250
}
members {
  id: "coord-1"
  role: "coordinator"
  state: MEMBER_STATE_ALIVE
}
reporter_traffic {
  messages_sent: 1
  bytes_received: 1099511627776
  elapsed_ms: 60000
}
reporter_local_health: 2
`;

const packet = membership.Packet.create({
    sender: membership.Address.create({ id: 'n1', endpoint: 'tcp://h:1' }),
    ping: membership.Ping.create({
        sequence: 3n,
        target: 'n2',
        updates: [membership.MemberUpdate.create({ id: 'n3', state: membership.MemberState.MEMBER_STATE_DEAD, incarnation: 4n, from: 'n1' })],
    }),
    body: 'ping',
});
const packetText = `sender {
  id: "n1"
  endpoint: "tcp://h:1"
}
ping {
  sequence: 3
  target: "n2"
  updates {
    id: "n3"
    state: MEMBER_STATE_DEAD
    incarnation: 4
    from: "n1"
  }
}
`;

const samples = [
    ['showroom/wire/envelope.proto', wire.Envelope, envelope, envelopeText],
    ['showroom/wire/media.proto', wire.MediaHeader, mediaHeader, mediaHeaderText],
    ['showroom/edge/session.proto', edge.OpenSessionRequest, openSession, openSessionText],
    ['showroom/room/rooms.proto', room.Room, roomSample, roomText],
    ['showroom/call/signal.proto', call.CallRecord, callRecord, callRecordText],
    ['showroom/admin/status.proto', admin.ClusterStatus, clusterStatus, clusterStatusText],
    ['showroom/membership/gossip.proto', membership.Packet, packet, packetText],
];

// --- the API -----------------------------------------------------------------------------------

test('the documented API shape', () => {
    assert.equal(wire.MessageKind.MESSAGE_KIND_EDGE_OPEN_SESSION, 201);
    assert.equal(wire.MessageKind.nameOf(201), 'MESSAGE_KIND_EDGE_OPEN_SESSION');
    assert.equal(wire.MessageKind.nameOf(123456), undefined);
    assert.ok(!Object.keys(wire.MessageKind).includes('nameOf'), 'nameOf is not an enum value');

    const body = new Uint8Array([9, 8, 7]);
    const bytes = wire.Envelope.encode({ kind: wire.MessageKind.MESSAGE_KIND_EDGE_OPEN_SESSION, requestId: 1n, body });
    assert.ok(bytes instanceof Uint8Array);
    assert.equal(hex(bytes), '08c90110013203090807');
    assert.deepEqual(wire.Envelope.decode(bytes), {
        kind: 201,
        requestId: 1n,
        isResponse: false,
        senderNode: '',
        error: null,
        body,
        deadlineMs: 0,
        protocolVersion: 0,
        forwarded: false,
    });
    assert.deepEqual(edge.JoinChannelRequest.create({ channel: 'a', notAField: 1 }), { channel: 'a', uid: 0, token: '', options: null });
    assert.equal(wire.Envelope.typeName, 'showroom.wire.Envelope');
    assert.ok(Object.isFrozen(showroom) && Object.isFrozen(wire) && Object.isFrozen(wire.Envelope) && Object.isFrozen(wire.MessageKind));
    // ArrayBuffer input (a WebSocket's binaryType 'arraybuffer') and Node Buffers decode too.
    assert.equal(wire.Envelope.decode(bytes.slice().buffer).requestId, 1n);
    assert.ok(wire.Envelope.decode(Buffer.from(bytes)).body.constructor === Uint8Array);
});

test('every message and enum of every .proto file is generated', () => {
    const files = readdirSync(path.join(protoDir, 'showroom')).flatMap((area) =>
        readdirSync(path.join(protoDir, 'showroom', area)).filter((f) => f.endsWith('.proto')).map((f) => `${area}/${f}`));
    assert.ok(files.length >= 6);
    let messages = 0;
    for (const file of files) {
        const source = readFileSync(path.join(protoDir, 'showroom', file), 'utf8');
        const pkg = /^package showroom\.(\w+);/m.exec(source)[1];
        for (const [, what, name] of source.matchAll(/^(message|enum)\s+(\w+)/gm)) {
            const T = showroom[pkg][name];
            assert.ok(T, `showroom.${pkg}.${name} (${file}) is missing`);
            if (what === 'enum') {
                for (const [k, v] of Object.entries(T)) assert.equal(T.nameOf(v) !== undefined && T[T.nameOf(v)], v, k);
                continue;
            }
            messages++;
            // Defaults encode to nothing and decode back to the defaults.
            const empty = T.create();
            assert.equal(T.encode(empty).length, 0, T.typeName);
            assert.deepEqual(T.decode(T.encode(empty)), empty);
            assert.deepEqual(T.decode(new Uint8Array(0)), empty);
        }
    }
    assert.ok(messages > 100, `${messages} messages`);
});

// --- round trips ---------------------------------------------------------------------------------

test('round trips of messages from every package', () => {
    for (const [, T, value] of samples) assert.deepEqual(T.decode(T.encode(value)), value, T.typeName);
    const more = [
        [edge.OpenSessionResponse, edge.OpenSessionResponse.create({
            sessionId: 2n ** 63n,
            heartbeatIntervalMs: 5000,
            limits: edge.SessionLimits.create({ maxFrameBytes: 1 << 20, maxChannels: 8 }),
        })],
        [edge.JoinChannelRequest, edge.JoinChannelRequest.create({
            channel: 'a',
            uid: 3,
            options: edge.MediaOptions.create({ clientRole: edge.ClientRole.CLIENT_ROLE_BROADCASTER, publishAudio: false, publishVideo: true }),
        })],
        [room.UpdateRoomRequest, room.UpdateRoomRequest.create({ roomId: 'r', name: '', metadata: null })],
        [call.DialRequest, call.DialRequest.create({ sessionId: 's', callee: 5, extension: { 'k ✓': 'v\u0000' }, timeoutMs: 15000 })],
        [call.PresenceRequest, call.PresenceRequest.create({ uids: [0, 1, 4294967295] })],
        [membership.Packet, membership.Packet.create({ nack: membership.Nack.create({ sequence: 0n }), body: 'nack' })],
        [admin.ClusterStatusRequest, admin.ClusterStatusRequest.create()],
        [wire.NodeInfo, wire.NodeInfo.create({ nodeId: 'n', role: wire.NodeRole.NODE_ROLE_EDGE, uptimeMs: 2n ** 53n + 2n, pid: 1 })],
    ];
    for (const [T, value] of more) assert.deepEqual(T.decode(T.encode(value)), value, T.typeName);
});

test('64-bit fields: BigInt out, BigInt or safe Number in, range checked', () => {
    const decode = (v) => wire.NodeInfo.decode(wire.NodeInfo.encode({ uptimeMs: v })).uptimeMs;
    assert.equal(decode(2n ** 64n - 1n), 18446744073709551615n);
    assert.equal(decode(Number.MAX_SAFE_INTEGER), 9007199254740991n);
    assert.equal(decode(4294967296), 4294967296n);
    assert.throws(() => decode(2 ** 53), /safe integer/);
    assert.throws(() => decode(1.5), /safe integer/);
    assert.throws(() => decode('1'), /BigInt/);
    assert.throws(() => decode(-1n), RangeError);
    assert.throws(() => decode(2n ** 64n), RangeError);
    // int64 takes negatives (Number or BigInt) and writes them as 10-byte varints.
    const roomOf = (v) => room.Room.encode({ createdAtMs: v });
    assert.equal(hex(roomOf(-1)), '30ffffffffffffffffff01');
    assert.equal(hex(roomOf(-1n)), '30ffffffffffffffffff01');
    assert.equal(room.Room.decode(roomOf(-(2n ** 63n))).createdAtMs, -(2n ** 63n));
    assert.equal(room.Room.decode(roomOf(-9007199254740991)).createdAtMs, -9007199254740991n);
    assert.throws(() => roomOf(2n ** 63n), RangeError);
    // A negative enum value (int32) is also 10 bytes; unknown values stay numbers.
    assert.equal(hex(wire.Envelope.encode({ kind: -5 })), '08fbffffffffffffffff01');
    assert.equal(wire.Envelope.decode(wire.Envelope.encode({ kind: -5 })).kind, -5);
    assert.equal(wire.Envelope.decode(wire.Envelope.encode({ kind: 999 })).kind, 999);
});

test('oneof: the case property, scalar members, last member wins', () => {
    const T = room.BanRuleRequest;
    assert.deepEqual(T.create(), { create: null, update: null, deleteId: 0n, list: false, change: null });
    // A member the case names is written even at its default.
    assert.equal(hex(T.encode({ change: 'deleteId', deleteId: 0n })), '1800');
    assert.equal(hex(T.encode({ change: 'list' })), '2000');
    assert.equal(hex(T.encode({ change: 'create' })), '0a00');
    assert.deepEqual(T.decode(T.encode({ change: 'list', list: false })), { ...T.create(), change: 'list' });
    // Without a case property, the member holding a value is written.
    assert.deepEqual(T.decode(T.encode({ deleteId: 5n })), { ...T.create(), deleteId: 5n, change: 'deleteId' });
    // The case property picks: other members are not written.
    assert.deepEqual(T.decode(T.encode({ change: 'list', list: true, deleteId: 5n })), { ...T.create(), list: true, change: 'list' });
    // Two members on the wire: the last wins and the other is reset.
    const both = new Uint8Array([...T.encode({ deleteId: 5n }), ...T.encode({ create: { channel: 'c' } })]);
    const m = T.decode(both);
    assert.equal(m.change, 'create');
    assert.equal(m.deleteId, 0n);
    assert.equal(m.create.channel, 'c');
});

test('proto3 optional: null when absent, written when set, even to the default', () => {
    const T = edge.MediaOptions;
    assert.equal(T.create().publishAudio, null);
    assert.equal(T.decode(new Uint8Array(0)).publishAudio, null);
    assert.equal(hex(T.encode({ publishAudio: false })), '1000');
    assert.equal(T.decode(T.encode({ publishAudio: false })).publishAudio, false);
    assert.equal(room.UpdateRoomRequest.decode(room.UpdateRoomRequest.encode({ name: '' })).name, '');
    assert.equal(room.UpdateRoomRequest.decode(room.UpdateRoomRequest.encode({ name: '' })).metadata, null);
});

test('absent sub-message is null, empty one is an object', () => {
    assert.equal(wire.Envelope.decode(wire.Envelope.encode({})).error, null);
    const withEmpty = wire.Envelope.decode(wire.Envelope.encode({ error: {} }));
    assert.deepEqual(withEmpty.error, wire.Error.create());
    // A sub-message sent twice is merged, as protobuf does.
    const twice = new Uint8Array([...wire.Envelope.encode({ error: { code: 1000 } }), ...wire.Envelope.encode({ error: { message: 'm' } })]);
    assert.deepEqual(wire.Envelope.decode(twice).error, wire.Error.create({ code: 1000, message: 'm' }));
});

test('bytes decode as views of the input; strings keep every character', () => {
    const bytes = wire.Envelope.encode({ body: new Uint8Array([1, 2, 3]) });
    const env = wire.Envelope.decode(bytes);
    assert.equal(env.body.buffer, bytes.buffer);
    const s = '\uFEFFbom ✓ 🎥 \u0000 ' + 'x'.repeat(300) + '你好';
    assert.equal(wire.Envelope.decode(wire.Envelope.encode({ senderNode: s })).senderNode, s);
    // Large messages: lengths of several bytes, sub-messages moved after their length grew.
    const big = room.Room.create({ name: 'n'.repeat(70000), audienceUids: Array.from({ length: 5000 }, (_, i) => i * 977), interaction: room.RoomInteraction.create({ id: 'é'.repeat(200) }) });
    assert.deepEqual(room.Room.decode(room.Room.encode(big)), big);
});

test('map keys: "__proto__" is an entry, integer keys are checked', () => {
    const extension = JSON.parse('{"__proto__": "x", "a": "b"}');
    const m = call.DialRequest.decode(call.DialRequest.encode({ extension }));
    assert.equal(Object.getPrototypeOf(m.extension), Object.prototype);
    assert.deepEqual(Object.entries(m.extension).sort(), [['__proto__', 'x'], ['a', 'b']]);
    assert.throws(() => call.CallRecord.encode({ absentSince: { x: 1n } }), /not an integer/);
});

// --- against protoc --------------------------------------------------------------------------------

for (const [file, T, value, text] of samples) {
    test(`protoc agrees: ${T.typeName}`, () => {
        const decoded = crossCheck(protoDir, file, T, value, text, { sameBytes: T !== call.CallRecord });
        assert.deepEqual(decoded, value);
    });
}

test('protoc agrees: oneof scalar members and proto3 optional at their defaults', () => {
    const rooms = 'showroom/room/rooms.proto';
    crossCheck(protoDir, rooms, room.BanRuleRequest, { change: 'deleteId', deleteId: 0n }, 'delete_id: 0\n');
    crossCheck(protoDir, rooms, room.BanRuleRequest, { change: 'list' }, 'list: false\n');
    crossCheck(protoDir, rooms, room.BanRuleRequest, { create: { channel: 'c', privileges: [1, 2] } }, 'create {\n  channel: "c"\n  privileges: 1\n  privileges: 2\n}\n');
    crossCheck(protoDir, 'showroom/edge/session.proto', edge.MediaOptions, { publishAudio: false, autoSubscribeVideo: true }, 'publish_audio: false\nauto_subscribe_video: true\n');
    crossCheck(protoDir, 'showroom/wire/envelope.proto', wire.Envelope, { kind: -5, requestId: 1 }, 'kind: -5\nrequest_id: 1\n');
});

// --- every scalar type, nested types, recursion, oneofs and map key types: a fixture .proto ------

const fixtureProto = `syntax = "proto3";
package fixture.types;

enum Color {
  COLOR_UNSPECIFIED = 0;
  COLOR_RED = 1;
  COLOR_NEGATIVE = -2;
}

message Scalars {
  double f_double = 1;
  float f_float = 2;
  int64 f_int64 = 3;
  uint64 f_uint64 = 4;
  int32 f_int32 = 5;
  fixed64 f_fixed64 = 6;
  fixed32 f_fixed32 = 7;
  bool f_bool = 8;
  string f_string = 9;
  bytes f_bytes = 10;
  uint32 f_uint32 = 11;
  Color f_enum = 12;
  sfixed32 f_sfixed32 = 13;
  sfixed64 f_sfixed64 = 14;
  sint32 f_sint32 = 15;
  sint64 f_sint64 = 16;
}

message Repeats {
  repeated double r_double = 1;
  repeated float r_float = 2;
  repeated int64 r_int64 = 3;
  repeated uint64 r_uint64 = 4;
  repeated int32 r_int32 = 5;
  repeated fixed64 r_fixed64 = 6;
  repeated fixed32 r_fixed32 = 7;
  repeated bool r_bool = 8;
  repeated string r_string = 9;
  repeated bytes r_bytes = 10;
  repeated uint32 r_uint32 = 11;
  repeated Color r_enum = 12;
  repeated sfixed32 r_sfixed32 = 13;
  repeated sfixed64 r_sfixed64 = 14;
  repeated sint32 r_sint32 = 15;
  repeated sint64 r_sint64 = 16;
  repeated sint32 unpacked = 17 [packed = false];
  repeated Outer.Inner inners = 18;
}

message Outer {
  message Inner {
    enum Level {
      LEVEL_UNSPECIFIED = 0;
      LEVEL_DEEP = 1;
    }
    int32 value = 1;
    Level level = 2;
  }
  Inner inner = 1;
  Outer child = 2;
  oneof pick {
    string pick_text = 3;
    Inner pick_inner = 5;
    sint64 pick_number = 6;
    bool pick_flag = 8;
  }
  int32 between = 4;
  optional int32 maybe = 7;
  optional string maybe_text = 9;
  optional Inner maybe_inner = 10;
  oneof second_choice {
    uint32 second_a = 11;
    string second_b = 12;
  }
}

message Maps {
  map<string, string> by_string = 1;
  map<int32, int64> by_int32 = 2;
  map<uint32, string> by_uint32 = 3;
  map<int64, bool> by_int64 = 4;
  map<uint64, bytes> by_uint64 = 5;
  map<sint32, double> by_sint32 = 6;
  map<sint64, float> by_sint64 = 7;
  map<fixed32, Color> by_fixed32 = 8;
  map<fixed64, Outer.Inner> by_fixed64 = 9;
  map<sfixed32, uint32> by_sfixed32 = 10;
  map<sfixed64, sint32> by_sfixed64 = 11;
  map<bool, string> by_bool = 12;
}
`;

const fixtureDir = mkdtempSync(path.join(tmpdir(), 'showroom-proto-js-'));
process.on('exit', () => rmSync(fixtureDir, { recursive: true, force: true }));
writeFileSync(path.join(fixtureDir, 'fixture.proto'), fixtureProto);
protoc(fixtureDir, ['--include_imports', '--descriptor_set_out=fixture.desc', 'fixture.proto']);
{
    const r = spawnSync('python3', [path.join(protoDir, 'js/generate.py'), path.join(fixtureDir, 'fixture.desc'), fixtureDir]);
    if (r.status !== 0) throw new Error(`generate.py failed: ${r.stderr}`);
}
copyFileSync(path.join(sdkProto, 'runtime.js'), path.join(fixtureDir, 'runtime.js'));
const { fixture } = await import(pathToFileURL(path.join(fixtureDir, 'showroom.js')).href);
const { Scalars, Repeats, Outer, Maps, Color } = fixture.types;

test('fixture: every scalar type at its extremes, against protoc', () => {
    const value = Scalars.create({
        fDouble: -0,
        fFloat: 1.5,
        fInt64: -(2n ** 63n),
        fUint64: 2n ** 64n - 1n,
        fInt32: -2147483648,
        fFixed64: 2n ** 64n - 1n,
        fFixed32: 4294967295,
        fBool: true,
        fString: 'é',
        fBytes: new Uint8Array([0]),
        fUint32: 4294967295,
        fEnum: Color.COLOR_NEGATIVE,
        fSfixed32: -2147483648,
        fSfixed64: -(2n ** 63n),
        fSint32: -2147483648,
        fSint64: -(2n ** 63n),
    });
    const text = `f_double: -0
f_float: 1.5
f_int64: -9223372036854775808
f_uint64: 18446744073709551615
f_int32: -2147483648
f_fixed64: 18446744073709551615
f_fixed32: 4294967295
f_bool: true
f_string: "\\303\\251"
f_bytes: "\\000"
f_uint32: 4294967295
f_enum: COLOR_NEGATIVE
f_sfixed32: -2147483648
f_sfixed64: -9223372036854775808
f_sint32: -2147483648
f_sint64: -9223372036854775808
`;
    assert.deepEqual(crossCheck(fixtureDir, 'fixture.proto', Scalars, value, text), value);
    const other = Scalars.create({ fDouble: NaN, fFloat: -Infinity, fInt64: 2n ** 63n - 1n, fInt32: 2147483647, fSfixed32: 2147483647, fSint32: 2147483647, fSint64: 2n ** 63n - 1n, fSfixed64: -1n });
    const otherText = `f_double: nan
f_float: -inf
f_int64: 9223372036854775807
f_int32: 2147483647
f_sfixed32: 2147483647
f_sfixed64: -1
f_sint32: 2147483647
f_sint64: 9223372036854775807
`;
    assert.deepEqual(crossCheck(fixtureDir, 'fixture.proto', Scalars, other, otherText), other);
});

test('fixture: repeated fields of every type, packed and not, against protoc', () => {
    const value = Repeats.create({
        rDouble: [0, -1.25],
        rFloat: [0.5, 3],
        rInt64: [-1n, 0n, 2n ** 62n],
        rUint64: [0n, 2n ** 64n - 1n],
        rInt32: [-1, 1],
        rFixed64: [1n],
        rFixed32: [7, 0],
        rBool: [true, false, true],
        rString: ['', 'a'],
        rBytes: [new Uint8Array(0), new Uint8Array([255])],
        rUint32: [0, 300],
        rEnum: [Color.COLOR_RED, 5, Color.COLOR_NEGATIVE],
        rSfixed32: [-3],
        rSfixed64: [-3n],
        rSint32: [-1, 1, -64],
        rSint64: [-1n, 2n ** 40n],
        unpacked: [-2, 2],
        inners: [Outer.Inner.create({ value: -7, level: Outer.Inner.Level.LEVEL_DEEP }), Outer.Inner.create()],
    });
    const text = [
        'r_double: 0', 'r_double: -1.25', 'r_float: 0.5', 'r_float: 3',
        'r_int64: -1', 'r_int64: 0', 'r_int64: 4611686018427387904',
        'r_uint64: 0', 'r_uint64: 18446744073709551615', 'r_int32: -1', 'r_int32: 1',
        'r_fixed64: 1', 'r_fixed32: 7', 'r_fixed32: 0', 'r_bool: true', 'r_bool: false', 'r_bool: true',
        'r_string: ""', 'r_string: "a"', 'r_bytes: ""', 'r_bytes: "\\377"', 'r_uint32: 0', 'r_uint32: 300',
        'r_enum: COLOR_RED', 'r_enum: 5', 'r_enum: COLOR_NEGATIVE', 'r_sfixed32: -3', 'r_sfixed64: -3',
        'r_sint32: -1', 'r_sint32: 1', 'r_sint32: -64', 'r_sint64: -1', 'r_sint64: 1099511627776',
        'unpacked: -2', 'unpacked: 2',
        'inners {', '  value: -7', '  level: LEVEL_DEEP', '}', 'inners {', '}', '',
    ].join('\n');
    assert.deepEqual(crossCheck(fixtureDir, 'fixture.proto', Repeats, value, text), value);
    // [packed = false] is written unpacked: one tag per value.
    assert.equal(hex(Repeats.encode({ unpacked: [1, 2] })), '880102880104');
    // Either encoding is read, whatever the field's own.
    assert.deepEqual(Repeats.decode(new Uint8Array([0x58, 1, 0x58, 2])).rUint32, [1, 2]);
    assert.deepEqual(Repeats.decode(new Uint8Array([0x8a, 0x01, 2, 2, 4])).unpacked, [1, 2]);
    assert.deepEqual(Repeats.decode(new Uint8Array([0x3d, 1, 0, 0, 0, 0x3a, 4, 2, 0, 0, 0])).rFixed32, [1, 2]);
});

test('fixture: nested types, oneofs in number order, optional fields, against protoc', () => {
    const value = Outer.create({
        inner: Outer.Inner.create({ value: 1 }),
        child: Outer.create({ pickInner: Outer.Inner.create({ level: Outer.Inner.Level.LEVEL_DEEP }), pick: 'pickInner' }),
        pickNumber: -(2n ** 63n),
        pick: 'pickNumber',
        between: 4,
        maybe: 0,
        maybeInner: Outer.Inner.create(),
        secondB: '',
        secondChoice: 'secondB',
    });
    const text = `inner {
  value: 1
}
child {
  pick_inner {
    level: LEVEL_DEEP
  }
}
between: 4
pick_number: -9223372036854775808
maybe: 0
maybe_inner {
}
second_b: ""
`;
    assert.deepEqual(crossCheck(fixtureDir, 'fixture.proto', Outer, value, text), value);
    assert.equal(Outer.create().maybeText, null);
    assert.equal(Outer.create().secondChoice, null);
    assert.equal(Outer.typeName, 'fixture.types.Outer');
    assert.equal(Outer.Inner.typeName, 'fixture.types.Outer.Inner');
    assert.equal(Outer.Inner.Level.nameOf(1), 'LEVEL_DEEP');
});

test('fixture: every map key type, against protoc', () => {
    const value = Maps.create({
        byString: { z: 'last', a: 'first' },
        byInt32: { '-5': -(2n ** 63n), 7: 0n },
        byUint32: { 4294967295: 'max' },
        byInt64: { '-9223372036854775808': true, '9007199254740993': false },
        byUint64: { '18446744073709551615': new Uint8Array([1, 2]) },
        bySint32: { '-1': 0.25 },
        bySint64: { '-2': -1.5 },
        byFixed32: { 1: Color.COLOR_NEGATIVE },
        byFixed64: { 2: Outer.Inner.create({ value: 3 }), 3: Outer.Inner.create() },
        bySfixed32: { '-3': 4 },
        bySfixed64: { '-4': -5 },
        byBool: { true: 'yes', false: 'no' },
    });
    const entry = (field, key, val) => `${field} {\n  key: ${key}\n${val ? `  value${val.startsWith('{') ? ' ' : ': '}${val}\n` : '  value: 0\n'}}\n`;
    const text = [
        entry('by_string', '"a"', '"first"'), entry('by_string', '"z"', '"last"'),
        entry('by_int32', '-5', '-9223372036854775808'), entry('by_int32', '7', '0'),
        entry('by_uint32', '4294967295', '"max"'),
        entry('by_int64', '-9223372036854775808', 'true'), entry('by_int64', '9007199254740993', 'false'),
        entry('by_uint64', '18446744073709551615', '"\\001\\002"'),
        entry('by_sint32', '-1', '0.25'), entry('by_sint64', '-2', '-1.5'),
        entry('by_fixed32', '1', 'COLOR_NEGATIVE'),
        entry('by_fixed64', '2', '{\n    value: 3\n  }'), entry('by_fixed64', '3', '{\n  }'),
        entry('by_sfixed32', '-3', '4'), entry('by_sfixed64', '-4', '-5'),
        entry('by_bool', 'false', '"no"'), entry('by_bool', 'true', '"yes"'),
    ].join('');
    assert.deepEqual(crossCheck(fixtureDir, 'fixture.proto', Maps, value, text, { sameBytes: false }), value);
});

// --- hostile input ----------------------------------------------------------------------------

// Each must throw an Error naming the type, at once: no hang, no allocation from the length.
function rejects(T, bytes, pattern) {
    const start = performance.now();
    assert.throws(() => T.decode(new Uint8Array(bytes)), (e) => e instanceof Error && e.message.startsWith(`${T.typeName}: invalid protobuf: `) && pattern.test(e.message));
    assert.ok(performance.now() - start < 1000, 'rejected promptly');
}

test('hostile input is rejected with a clear error', () => {
    const T = wire.Envelope;
    rejects(T, [0x22, 3, 0x61, 0x62], /length 3 runs past the end \(2 bytes left\) at byte 1/); // truncated string
    rejects(T, [0x10, 0x80], /truncated varint at byte 1/);
    rejects(T, [0x10], /truncated varint/);
    rejects(T, [0x32, 0xff, 0xff, 0xff, 0xff, 0x07], /length 2147483647 runs past the end/);
    rejects(T, [0x32, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], /length over 2\^32/);
    rejects(T, [0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], /varint longer than 10 bytes/); // 11-byte varint
    rejects(T, [0x0a, 0x00], /field 1 has wire type 2, expected 0/); // kind sent as length-delimited
    rejects(T, [0x2d, 0, 0, 0, 0], /field 5 has wire type 5, expected 2/); // error sent as fixed32
    rejects(T, [0x00, 0x01], /invalid field tag 0/);
    rejects(T, [0x7e], /invalid wire type 6/);
    rejects(T, [0x7c], /unmatched end-group/);
    rejects(T, [0x7b, 0x08, 0x01], /truncated varint/); // group never closed
    rejects(T, [0x7b, 0x84, 0x01], /group 15 closed as 16/);
    rejects(T, [0x7d, 0, 0], /truncated: 4 bytes needed, 2 left/);
    rejects(T, [0x22, 2, 0xc3, 0x28], /invalid UTF-8/);
    // A sub-message's content cannot run past its own length into the parent.
    rejects(T, [0x2a, 0x02, 0x12, 0x05, 0x61, 0x62, 0x63, 0x64, 0x65], /length 5 runs past the end \(0 bytes left\)/);
    rejects(wire.MediaHeader, [0x6a, 0x05, 0x61], /length 5 runs past the end/);
    // Groups nested deeper than protobuf's limit.
    rejects(T, new Array(200).fill(0x7b), /nested deeper than 100/);
    // Sub-messages nested deeper than the limit (a recursive type).
    let deep = new Uint8Array(0);
    for (let i = 0; i < 101; i++) deep = new Uint8Array([0x12, ...lengthVarint(deep.length), ...deep]);
    rejects(Outer, deep, /nested deeper than 100/);
    // Unknown fields of every wire type are skipped.
    const unknown = [0xf8, 0x01, 0x96, 0x01, 0xf9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0xfa, 0x01, 0x01, 0x00, 0xfd, 0x01, 1, 2, 3, 4, 0xfb, 0x01, 0x08, 0x01, 0xfc, 0x01, 0x10, 0x07];
    assert.deepEqual(T.decode(new Uint8Array(unknown)), { ...T.create(), requestId: 7n });
    assert.throws(() => T.decode('text'), TypeError);
});

function lengthVarint(n) {
    const out = [];
    while (n > 127) {
        out.push((n & 127) | 128);
        n >>>= 7;
    }
    out.push(n);
    return out;
}

test('encode refuses cycles and bad 64-bit values with a clear error', () => {
    const cycle = Outer.create();
    cycle.child = cycle;
    assert.throws(() => Outer.encode(cycle), /nested deeper than 100 levels/);
    assert.throws(() => wire.Envelope.encode(null), TypeError);
    assert.throws(() => wire.Envelope.encode({ senderNode: 5 }), /expected a string/);
    // The writer kept between encodes is not left broken by a failed one.
    assert.equal(hex(wire.Envelope.encode({ requestId: 1n })), '1001');
});

test('mutated messages decode or throw a decode error, never anything else', () => {
    // Deterministic: the same mutations on every run.
    let seed = 0x9e3779b9;
    const rand = (n) => {
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        return (seed >>> 0) % n;
    };
    let decoded = 0;
    let rejected = 0;
    for (const [, T, value] of samples) {
        const good = T.encode(value);
        for (let i = 0; i < 600; i++) {
            const bytes = Array.from(good);
            for (let k = 1 + rand(3); k > 0 && bytes.length > 0; k--) {
                const at = rand(bytes.length);
                switch (rand(4)) {
                    case 0: bytes[at] = rand(256); break;
                    case 1: bytes.splice(at, 1); break;
                    case 2: bytes.splice(at, 0, rand(256)); break;
                    default: bytes.length = at;
                }
            }
            let m;
            try {
                m = T.decode(new Uint8Array(bytes));
            } catch (e) {
                assert.ok(e instanceof Error && e.message.startsWith(`${T.typeName}: invalid protobuf: `), String(e));
                rejected++;
                continue;
            }
            decoded++;
            // Whatever decoded encodes again and reads back the same.
            assert.deepEqual(T.decode(T.encode(m)), m);
        }
    }
    assert.ok(decoded > 100 && rejected > 100, `${decoded} decoded, ${rejected} rejected`);
});
