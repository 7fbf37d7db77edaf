// The viewer's page: one room on screen, plays at once, swipe up/down to the next room (the video
// loader keeps the neighbours prejoined), both hosts of a PK and a co-host side by side, chat, the
// audience count, and a paid 1v1 call with the host.
import {
  ShowroomRTC, RoomService, loadConfig, tokenProvider, fetchLoginToken, userId, userName, param,
  $, element, notice, reportError, is, formatCount, appendChat, test,
} from './common.js';
import * as loaderModule from '../sdk/video-loader.js';
import * as callModule from '../sdk/call-client.js';

const VideoLoader = loaderModule.VideoLoader ?? loaderModule.default;
const AnchorState = loaderModule.AnchorState ?? VideoLoader.AnchorState ??
  { IDLE: 0, PREJOINED: 1, JOINED_WITH_VIDEO: 2, JOINED_WITH_AUDIO_VIDEO: 3 };
const CallClient = callModule.CallClient ?? callModule.default;
const CallState = callModule.CallState ?? CallClient.CallState ?? {};

const SWIPE_DISTANCE = 60;   // px of drag that turn into a swipe
const WHEEL_DISTANCE = 40;   // accumulated wheel delta that turns into a swipe
const WHEEL_COOLDOWN = 450;  // ms: one wheel gesture (with its inertia), one room

const config = await loadConfig();
const uid = userId('showroom.viewer.uid');
const name = userName(uid);
test.uid = uid;

const rooms = new RoomService({ tokenProvider });
// One wildcard token opens every room's channel (the seeds' way for a swipe feed).
const feedToken = await tokenProvider('', uid, 'subscriber');

/** Slides by channel: {element, host, guests: Map<uid, element>}. */
const slides = new Map();
const loader = new VideoLoader({
  appId: config.appId, uid, prejoinCount: 1, tokenProvider,
  view: (anchor) => slideFor(anchor.channel).host,
});

let feed = [];        // rooms, newest first
let index = -1;       // the room on screen
let current = null;   // the room object on screen (latest version)
let pendingDrag = null;   // the neighbour a finger drags into view
let dragRecord = null;    // its swipe record, kept if the drag turns into a swipe

const channelOf = (room) => room.channel || room.roomId;
const anchorOf = (room) => ({ channel: channelOf(room), uid: room.ownerUid, token: feedToken });
const anchors = () => feed.map(anchorOf);

test.sources.push(() => Array.from(loader.heldChannels ?? [], (channel) => ({ label: 'live', client: loader.clientOf(channel) })));
test.feed = () => feed.map((room) => room.roomId);

// ---- the feed ----

function slideFor(channel) {
  let slide = slides.get(channel);
  if (slide) return slide;
  const room = feed.find((r) => channelOf(r) === channel);
  const host = element('div', { class: 'tile host', dataset: { uid: String(room?.ownerUid ?? ''), role: 'host' } });
  const stage = element('div', { class: 'stage' }, host);
  const node = element('section', {
    class: 'slide', dataset: { roomId: room?.roomId ?? '', channel },
  }, stage, element('div', { class: 'slide-caption' },
    element('strong', { text: room?.name ?? channel }), element('small', { text: room?.ownerName ?? '' })));
  $('#feed').append(node);
  slide = { element: node, stage, host, guests: new Map() };
  slides.set(channel, slide);
  return slide;
}

/** Places the slides around the current one; those far away are removed (their channels are left). */
function layout(dragOffset = 0) {
  const keep = new Set();
  for (let i = index - 1; i <= index + 1; i++) {
    if (i < 0 || i >= feed.length) continue;
    const channel = channelOf(feed[i]);
    keep.add(channel);
    const slide = slideFor(channel);
    slide.element.style.transform = `translateY(calc(${(i - index) * 100}% + ${dragOffset}px))`;
    slide.element.classList.toggle('current', i === index);
    slide.element.classList.toggle('dragging', dragOffset !== 0);
  }
  for (const [channel, slide] of slides) {
    if (!keep.has(channel)) { slide.element.remove(); slides.delete(channel); }
  }
}

async function loadFeed() {
  const wanted = param('room');
  const { rooms: list } = await rooms.listRooms({ pageSize: 50 });
  feed = list.filter((room) => room.ownerUid !== uid && !is(room.state, 'CLOSED', 2));
  let at = feed.findIndex((room) => room.roomId === wanted);
  if (at < 0 && wanted) {
    try {
      feed.unshift(await rooms.getRoom(wanted));
      at = 0;
    } catch (error) {
      reportError(`room ${wanted}`, error);
    }
  }
  return Math.max(at, 0);
}

/** Shows room `to`: the loader subscribes it (prejoined neighbours), the room service counts us in. */
function go(to, how, started = null) {
  if (to < 0 || to >= feed.length || to === index) return false;
  const previous = current;
  index = to;
  current = feed[index];
  // A drag started the room's video before the finger lifted: its record counts from then.
  const record = started?.channel === channelOf(current) ? started : swipeRecord(current, how);
  record.index = index;
  test.swipes.push(record);
  test.roomId = current.roomId;
  test.channel = channelOf(current);
  layout();
  loader.cardVisible?.(anchorOf(current));
  loader.swipe(index, anchors(), true);
  if (previous) dropGuests(channelOf(previous));
  showRoom(current);
  enterRoom(current, previous).catch((error) => reportError('joining the room', error));
  const query = new URLSearchParams(location.search);
  query.set('room', current.roomId);
  history.replaceState(null, '', `?${query}`);
  return true;
}

function swipeRecord(room, how) {
  return {
    how, index: -1, roomId: room.roomId, channel: channelOf(room),
    startedAt: Math.round(performance.now()), firstFrameMs: null, actualMs: null, perceivedMs: null,
  };
}

loader.on('first-frame', ({ channel, uid: anchorUid, actualMs, perceivedMs }) => {
  const now = performance.now();
  const record = dragRecord?.channel === channel ? dragRecord : test.swipes.findLast((s) => s.channel === channel);
  if (record && record.firstFrameMs === null) {
    record.firstFrameMs = Math.round(now - record.startedAt);
    record.actualMs = actualMs;
    record.perceivedMs = perceivedMs;
  }
  test.log({ kind: 'first-frame', channel, uid: anchorUid, actualMs, perceivedMs });
  slides.get(channel)?.element.classList.add('playing');
  if (current && channel === channelOf(current)) attachGuests(channel);
});
loader.on('error', ({ channel, error }) => reportError(`room ${channel}`, error));

// ---- the room on screen: name, audience count, chat, PK / co-host ----

function showRoom(room) {
  current = room;
  $('#room-name').textContent = room.name || room.roomId;
  $('#room-owner').textContent = room.ownerName || `#${room.ownerUid}`;
  setAudience(room.audienceCount);
  showInteraction(room);
  document.body.dataset.roomId = room.roomId;
}

function setAudience(count) {
  const node = $('#audience-count');
  node.textContent = formatCount(count ?? 0);
  node.dataset.count = String(count ?? 0);
  test.audience = count ?? 0;
}

function showInteraction(room) {
  const badge = $('#interaction-badge');
  const kind = room.interaction?.kind;
  let text = '';
  if (is(kind, 'PK', 2)) {
    const peer = feed.find((r) => r.roomId === room.interaction.peerRoomId);
    text = `PK · vs ${peer?.ownerName || `#${room.interaction.peerUid}`}`;
  } else if (is(kind, 'COHOST', 3)) {
    text = 'Co-host';
  } else if (is(kind, 'CALL', 1)) {
    text = 'In a call';
  }
  badge.textContent = text;
  badge.hidden = !text;
  badge.dataset.kind = text ? text.split(' ')[0].toLowerCase() : 'idle';
  test.interaction = badge.dataset.kind;
}

/** Room changes that concern the room on screen. */
function updated(room) {
  if (!room) return;
  const at = feed.findIndex((r) => r.roomId === room.roomId);
  if (at >= 0 && !(Number(feed[at].version ?? 0) > Number(room.version ?? 0))) feed[at] = room;
  if (current && room.roomId === current.roomId && !(Number(current.version ?? 0) > Number(room.version ?? 0))) showRoom(room);
}

let enterSequence = 0;
async function enterRoom(room, previous) {
  const mine = ++enterSequence;
  if (previous) {
    rooms.unsubscribe(previous.roomId).catch(() => {});
    rooms.leaveRoom(previous.roomId, uid).catch(() => {});
  }
  $('#chat-log').replaceChildren();
  test.chat.length = 0;
  const joined = await rooms.joinRoom(room.roomId, uid, name);
  if (mine !== enterSequence) return;
  updated(joined);
  updated(await rooms.subscribe(room.roomId));
  const history = await rooms.messages(room.roomId, { limit: 30 });
  if (mine !== enterSequence) return;
  for (const message of history) appendChat($('#chat-log'), message);
}

rooms.on('snapshot', updated);
rooms.on('room-updated', updated);
rooms.on('interaction-changed', updated);
rooms.on('user-count-changed', (room) => {
  updated(room);
  if (current && room.roomId === current.roomId) setAudience(room.audienceCount);
});
rooms.on('message', (message) => {
  if (current && message.roomId === current.roomId) appendChat($('#chat-log'), message);
});
// Every PK and co-host step (a seat taken or left too) carries the room after it.
rooms.on('interaction', (_event, room) => updated(room));
rooms.on('room-closed', (room) => {
  const slide = slides.get(channelOf(room));
  slide?.element.classList.add('ended');
  if (current && room.roomId === current.roomId) notice('This show has ended');
});

$('#chat-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('#chat-input');
  const text = input.value.trim();
  if (!text || !current) return;
  input.value = '';
  try {
    appendChat($('#chat-log'), await rooms.sendMessage(current.roomId, uid, text, name));
  } catch (error) {
    input.value = text;
    reportError('chat', error);
  }
});

// ---- guests: a PK peer (forwarded into this room's channel) or a co-host ----

const hooked = new WeakSet();
const showGuest = async (client, channel, user, mediaType) => {
  if (!current || channel !== channelOf(current) || user.uid === current.ownerUid) return;
  try {
    const track = await client.subscribe(user, mediaType);
    if (mediaType === 'audio') { (user.audioTrack ?? track)?.play(); return; }
    const slide = slideFor(channel);
    let tile = slide.guests.get(user.uid);
    if (!tile) {
      tile = element('div', { class: 'tile guest', dataset: { uid: String(user.uid), role: 'guest' } });
      slide.guests.set(user.uid, tile);
      slide.stage.append(tile);
      slide.stage.classList.add('split');
    }
    (user.videoTrack ?? track)?.play(tile);
  } catch (error) {
    reportError(`guest ${user.uid}`, error);
  }
};

function removeGuest(channel, guestUid) {
  const slide = slides.get(channel);
  const tile = slide?.guests.get(guestUid);
  if (!tile) return;
  tile.remove();
  slide.guests.delete(guestUid);
  slide.stage.classList.toggle('split', slide.guests.size > 0);
}

/** Subscribes the other broadcasters of the room on screen (the loader subscribes only the host). */
function attachGuests(channel) {
  const client = loader.clientOf(channel);
  if (!client) return;
  if (!hooked.has(client)) {
    hooked.add(client);
    client.on('user-published', (user, mediaType) => showGuest(client, channel, user, mediaType));
    client.on('user-unpublished', (user, mediaType) => { if (mediaType === 'video') removeGuest(channel, user.uid); });
    client.on('user-left', (user) => removeGuest(channel, user.uid));
  }
  const slide = slideFor(channel);
  for (const user of client.remoteUsers ?? []) {
    if (user.uid === current?.ownerUid) continue;
    if (user.hasVideo && !slide.guests.has(user.uid)) showGuest(client, channel, user, 'video');
    if (user.hasAudio && !user.audioTrack) showGuest(client, channel, user, 'audio');
  }
}

/** Leaving a room on screen: its guests stop decoding (the loader takes care of the host). */
function dropGuests(channel) {
  const slide = slides.get(channel);
  const client = loader.clientOf(channel);
  for (const guestUid of [...(slide?.guests.keys() ?? [])]) {
    const user = client?.remoteUsers?.find((u) => u.uid === guestUid);
    if (user) client.unsubscribe(user).catch(() => {});
    removeGuest(channel, guestUid);
  }
}

// A guest may already publish when the room comes on screen; the client exists only once joined.
setInterval(() => { if (current) attachGuests(channelOf(current)); }, 500);

// ---- swiping: touch, wheel, arrow keys ----

const feedNode = $('#feed');
let lastWheelSwipeAt = 0;
const step = (delta, how) => {
  const now = performance.now();
  if (how === 'wheel' && now - lastWheelSwipeAt < WHEEL_COOLDOWN) return;
  if (go(index + delta, how) && how === 'wheel') lastWheelSwipeAt = now;
};

let touchStartY = null;
feedNode.addEventListener('touchstart', (event) => {
  if (event.touches.length !== 1) return;
  touchStartY = event.touches[0].clientY;
}, { passive: true });
feedNode.addEventListener('touchmove', (event) => {
  if (touchStartY === null) return;
  const dy = event.touches[0].clientY - touchStartY;
  layout(dy);
  // The neighbour coming into view starts its video before the finger lifts.
  const neighbour = feed[index + (dy < 0 ? 1 : -1)];
  if (neighbour && Math.abs(dy) > 12 && pendingDrag?.roomId !== neighbour.roomId) {
    releaseDrag();
    pendingDrag = neighbour;
    dragRecord = swipeRecord(neighbour, 'touch');
    loader.switchAnchorState(AnchorState.JOINED_WITH_VIDEO, anchorOf(neighbour), 'drag');
  }
}, { passive: true });
feedNode.addEventListener('touchend', (event) => {
  if (touchStartY === null) return;
  const dy = event.changedTouches[0].clientY - touchStartY;
  touchStartY = null;
  if (dy <= -SWIPE_DISTANCE) go(index + 1, 'touch', dragRecord);
  else if (dy >= SWIPE_DISTANCE) go(index - 1, 'touch', dragRecord);
  layout();
  releaseDrag();
});
function releaseDrag() {
  if (!pendingDrag) return;
  loader.switchAnchorState(AnchorState.IDLE, anchorOf(pendingDrag), 'drag');
  pendingDrag = null;
  dragRecord = null;
}

let wheel = 0;
// Anywhere on the page but the chat, which scrolls by itself.
document.addEventListener('wheel', (event) => {
  if (event.target instanceof Element && event.target.closest('#chat-log')) return;
  event.preventDefault();
  wheel += event.deltaY;
  if (Math.abs(wheel) >= WHEEL_DISTANCE) {
    step(Math.sign(wheel), 'wheel');
    wheel = 0;
  }
}, { passive: false });

document.addEventListener('keydown', (event) => {
  if (event.target instanceof HTMLInputElement) return;
  if (event.key === 'ArrowDown' || event.key === 'PageDown') { event.preventDefault(); step(1, 'key'); }
  if (event.key === 'ArrowUp' || event.key === 'PageUp') { event.preventDefault(); step(-1, 'key'); }
});

// ---- 1v1: call the host; the host pauses the show while the call lasts ----

const ACTIVE_CALL = ['calling', 'connecting', 'connected'];
let calls = null;
let callTracks = null;
let callActive = false;
const stateName = (state) => Object.entries(CallState).find(([, value]) => value === state)?.[0]?.toLowerCase() ?? String(state);

async function callClient() {
  if (calls) return calls;
  const client = new CallClient({ appId: config.appId, uid });
  client.on('callStateChanged', (state, stateReason, eventReason, eventInfo) => {
    const name = stateName(state);
    test.call.state = name;
    test.call.reason = stateReason;
    test.call.history.push(name);
    test.log({ kind: 'call', state: name, stateReason, eventReason });
    if (name === 'connected') test.call.connectedAt = Math.round(performance.now());
    if (ACTIVE_CALL.includes(name)) {
      callActive = true;
      showCall(name);
    } else if (callActive) {
      callActive = false;
      endCallView();
    }
  });
  client.on('callError', (error) => reportError('call', error));
  await client.login(await fetchLoginToken(uid));
  test.sources.push(() => (client.rtcClient ? [{ label: 'call', client: client.rtcClient }] : []));
  calls = client;
  return client;
}

function showCall(state) {
  const view = $('#call-view');
  view.dataset.state = state;
  view.hidden = !ACTIVE_CALL.includes(state);
  $('#call-status').textContent = {
    calling: 'Calling the host…', connecting: 'Connecting…', connected: 'In a call',
  }[state] ?? state;
  document.body.classList.toggle('in-call', !view.hidden);
}

function endCallView() {
  $('#call-view').hidden = true;
  document.body.classList.remove('in-call');
  for (const track of callTracks ?? []) { track.stop?.(); track.close?.(); }
  callTracks = null;
}

$('#call-button').addEventListener('click', async () => {
  if (!current) return;
  const host = current.ownerUid;
  try {
    const client = await callClient();
    showCall('calling');
    test.call.remoteUid = host;
    callTracks = await ShowroomRTC.createMicrophoneAndCameraTracks(undefined, { encoderConfig: { width: 320, height: 240, frameRate: 15, bitrateMax: 400 } });
    callTracks[1].play($('#call-local'));
    await client.prepareForCall({ localTracks: callTracks, remoteView: $('#call-remote'), liveRoomId: current.roomId });
    await client.call(host, { callType: 'video' });
  } catch (error) {
    endCallView();
    reportError('call', error);
  }
});

$('#hangup-button').addEventListener('click', async () => {
  if (!calls) return;
  try {
    if (test.call.state === 'calling') await calls.cancelCall();
    else await calls.hangup(test.call.remoteUid);
  } catch (error) {
    reportError('hang up', error);
  }
});

// ---- start ----

addEventListener('pagehide', () => {
  if (current) rooms.leaveRoom(current.roomId, uid).catch(() => {});
  if (callActive) calls.hangup(test.call.remoteUid).catch(() => {});
  calls?.logout().catch(() => {});
  loader.cleanCache();
});

try {
  const start = await loadFeed();
  if (!feed.length) {
    notice('No live rooms right now');
    $('#feed').append(element('p', { class: 'empty', text: 'Nobody is live right now.' }));
  } else {
    // Up to 20 rooms around the start are looked up and opened ahead.
    loader.preloadChannels?.(anchors().slice(Math.max(0, start - 10), start + 10));
    go(start, 'open');
  }
  test.ready = true;
} catch (error) {
  reportError('loading rooms', error);
}
