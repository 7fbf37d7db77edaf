// The host's page: go live from the camera (room created, channel joined as host, camera and
// microphone published), own preview, chat, audience count, PK invitations both ways, co-host
// requests, and incoming 1v1 calls (the show pauses while the call lasts).
import {
  ShowroomRTC, RoomService, loadConfig, tokenProvider, fetchToken, fetchLoginToken, userId, userName, param,
  $, element, notice, reportError, is, formatCount, appendChat, test,
} from './common.js';
import * as callModule from '../sdk/call-client.js';

const CallClient = callModule.CallClient ?? callModule.default;
const CallState = callModule.CallState ?? CallClient.CallState ?? {};

const config = await loadConfig();
const uid = userId('showroom.host.uid');
const name = userName(uid).replace(/^guest-/, 'host-');
test.uid = uid;

const rooms = new RoomService({ tokenProvider });
const client = ShowroomRTC.createClient({ mode: 'live', codec: 'vp8' });
let tracks = null;
let room = null;
let calls = null;

test.sources.push(() => [{ label: 'live', client }]);
test.local = () => (tracks ? client.getLocalVideoStats() : null);
$('#show-name').value = param('title') || `${name}'s show`;

/** `?video=320x240x15` sets the camera's encoder; a phone's default is 480p. */
function encoderConfig() {
  const match = /^(\d+)x(\d+)(?:x(\d+))?$/.exec(param('video') ?? '');
  if (!match) return '480p';
  return { width: Number(match[1]), height: Number(match[2]), frameRate: Number(match[3] ?? 15), bitrateMax: 600 };
}

// ---- going live ----

$('#golive-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const button = $('#golive-button');
  button.disabled = true;
  try {
    await goLive($('#show-name').value.trim() || `${name}'s show`);
  } catch (error) {
    button.disabled = false;
    reportError('going live', error);
  }
});

async function goLive(title) {
  tracks = await ShowroomRTC.createMicrophoneAndCameraTracks(undefined, { encoderConfig: encoderConfig() });
  tracks[1].play($('#preview'));
  room = await rooms.createRoom({ name: title, ownerUid: uid, ownerName: name });
  test.roomId = room.roomId;
  test.channel = room.channel || room.roomId;
  const token = await fetchToken(test.channel, uid, 'publisher');
  await client.setClientRole('host');
  await client.join(config.appId, test.channel, token, uid);
  await client.publish(tracks);
  document.body.dataset.live = 'true';
  document.body.dataset.roomId = room.roomId;
  $('#golive-form').hidden = true;
  $('.chat').hidden = false;
  $('.actions').hidden = false;
  showRoom(room);
  showRoom(await rooms.subscribe(room.roomId));
  for (const message of await rooms.messages(room.roomId, { limit: 30 })) appendChat($('#chat-log'), message);
  notice('You are live');
  test.live = true;
  await acceptCalls().catch((error) => reportError('calls', error));
}

client.on('connection-state-change', (state, _previous, reason) => {
  test.log({ kind: 'connection', state, reason });
  if (state === 'RECONNECTING') notice('Reconnecting…');
});
client.on('token-privilege-will-expire', async () => {
  try { await client.renewToken(await fetchToken(test.channel, uid, 'publisher')); } catch (error) { reportError('token', error); }
});

$('#end-button').addEventListener('click', async () => {
  await endShow();
  location.href = './';
});

async function endShow() {
  try {
    if (room) await rooms.closeRoom(room.roomId, uid);
  } catch { /* closed already, or the owner-offline grace closes it */ }
  await calls?.logout().catch(() => {});
  await client.leave().catch(() => {});
  for (const track of tracks ?? []) track.close?.();
}
addEventListener('pagehide', () => { endShow(); });

// ---- the room: audience count, chat, requests, PK ----

function showRoom(next) {
  if (!next || next.roomId !== room?.roomId) return;
  if (Number(room.version ?? 0) > Number(next.version ?? 0)) return;
  room = next;
  $('#room-name').textContent = room.name;
  $('#room-id').textContent = room.roomId;
  const count = $('#audience-count');
  count.textContent = formatCount(room.audienceCount ?? 0);
  count.dataset.count = String(room.audienceCount ?? 0);
  test.audience = room.audienceCount ?? 0;
  showInteraction();
  showRequests();
}

function showInteraction() {
  const interaction = room.interaction;
  const badge = $('#interaction-badge');
  const pk = is(interaction?.kind, 'PK', 2);
  const call = is(interaction?.kind, 'CALL', 1);
  const cohost = is(interaction?.kind, 'COHOST', 3);
  badge.hidden = !(pk || call || cohost);
  badge.textContent = pk ? `PK · vs #${interaction.peerUid}` : call ? 'In a call' : cohost ? 'Co-host' : '';
  badge.dataset.kind = pk ? 'pk' : call ? 'call' : cohost ? 'co-host' : 'idle';
  test.interaction = badge.dataset.kind;
  $('#stop-interaction').hidden = !pk;
  $('#pk-button').hidden = pk;
}

function showRequests() {
  const list = $('#request-list');
  const pending = (room.pending ?? []).filter((request) => request.toRoomId === room.roomId || request.toUid === uid ||
    is(request.kind, 'COHOST_APPLICATION', 2));
  list.replaceChildren(...pending.map((request) => {
    const pk = is(request.kind, 'PK_INVITATION', 1);
    const answer = (accept) => async () => {
      try {
        if (pk) {
          if (accept) await rooms.acceptPK({ roomId: room.roomId, uid, invitationId: request.id });
          else await rooms.rejectPK({ roomId: room.roomId, uid, invitationId: request.id });
        } else {
          await rooms.answerCoHostRequest({ roomId: room.roomId, uid, requestId: request.id, accept });
        }
      } catch (error) {
        reportError(pk ? 'PK' : 'co-host', error);
      }
    };
    const who = request.userName || `#${request.fromUid}`;
    return element('li', { dataset: { requestId: request.id, kind: pk ? 'pk' : 'cohost' } },
      element('span', { text: pk ? `${who} invites you to a PK` : `${who} wants to co-host` }),
      element('button', { class: 'accent', type: 'button', text: 'Accept', onclick: answer(true) }),
      element('button', { type: 'button', text: 'Decline', onclick: answer(false) }));
  }));
  $('#requests').hidden = pending.length === 0;
}

for (const event of ['snapshot', 'room-updated', 'interaction-changed', 'user-count-changed']) rooms.on(event, showRoom);
rooms.on('interaction', (step, next) => {
  test.log({ kind: 'interaction', type: step?.type });
  showRoom(next);
  if (/REJECTED|EXPIRED|CANCELLED/.test(step?.type ?? '')) notice(`PK: ${String(step.type).toLowerCase().replace(/_/g, ' ')}`);
});
rooms.on('message', (message) => { if (message.roomId === room?.roomId) appendChat($('#chat-log'), message); });
rooms.on('room-closed', (closed, reason) => { if (closed.roomId === room?.roomId) notice(`Your room closed (${reason})`, 'error'); });

$('#chat-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('#chat-input');
  const text = input.value.trim();
  if (!text || !room) return;
  input.value = '';
  try {
    appendChat($('#chat-log'), await rooms.sendMessage(room.roomId, uid, text, name));
  } catch (error) {
    input.value = text;
    reportError('chat', error);
  }
});

$('#pk-button').addEventListener('click', async () => {
  const sheet = $('#pk-sheet');
  sheet.hidden = false;
  const list = $('#pk-list');
  list.replaceChildren(element('li', { text: 'Looking for hosts…' }));
  try {
    const { rooms: open } = await rooms.listRooms({ pageSize: 50 });
    const others = open.filter((r) => r.roomId !== room.roomId && !is(r.state, 'CLOSED', 2));
    list.replaceChildren(...others.map((other) => element('li', { dataset: { roomId: other.roomId } },
      element('span', { text: `${other.name} · ${other.ownerName || `#${other.ownerUid}`}` }),
      element('button', {
        type: 'button', class: 'accent', text: 'Invite',
        onclick: async (event) => {
          event.target.disabled = true;
          try {
            await rooms.invitePK({ roomId: room.roomId, uid, peerRoomId: other.roomId });
            notice(`Invited ${other.ownerName || other.ownerUid}`);
            sheet.hidden = true;
          } catch (error) {
            event.target.disabled = false;
            reportError('PK invite', error);
          }
        },
      }))));
    if (!others.length) list.replaceChildren(element('li', { text: 'No other host is live.' }));
  } catch (error) {
    reportError('rooms', error);
  }
});
$('#pk-close').addEventListener('click', () => { $('#pk-sheet').hidden = true; });
$('#stop-interaction').addEventListener('click', async () => {
  try {
    await rooms.stopPK({ roomId: room.roomId, uid, pkId: room.interaction.id });
  } catch (error) {
    reportError('ending the PK', error);
  }
});

// ---- guests on this stage: the PK peer (forwarded into this channel) or a co-host ----

const guests = new Map();
client.on('user-published', async (user, mediaType) => {
  try {
    await client.subscribe(user, mediaType);
    if (mediaType === 'audio') { user.audioTrack?.play(); return; }
    let tile = guests.get(user.uid);
    if (!tile) {
      tile = element('div', { class: 'tile guest', dataset: { uid: String(user.uid), role: 'guest' } });
      guests.set(user.uid, tile);
      $('#stage').append(tile);
      $('#stage').classList.add('split');
    }
    user.videoTrack?.play(tile);
  } catch (error) {
    reportError(`guest ${user.uid}`, error);
  }
});
const dropGuest = (user) => {
  guests.get(user.uid)?.remove();
  guests.delete(user.uid);
  $('#stage').classList.toggle('split', guests.size > 0);
};
client.on('user-unpublished', (user, mediaType) => { if (mediaType === 'video') dropGuest(user); });
client.on('user-left', dropGuest);

// ---- incoming 1v1 calls: the show pauses while the call lasts ----

const stateName = (state) => Object.entries(CallState).find(([, value]) => value === state)?.[0]?.toLowerCase() ?? String(state);
const callerOf = (info) => info?.caller ?? info?.callerUid ?? info?.fromUserId ?? info?.remoteUserId ?? test.call.remoteUid;
const calleeOf = (info) => info?.callee ?? info?.calleeUid ?? info?.toUserId;

async function acceptCalls() {
  calls = new CallClient({ appId: config.appId, uid });
  calls.on('callStateChanged', (state, stateReason, eventReason, eventInfo) => {
    const now = stateName(state);
    test.call.state = now;
    test.call.reason = stateReason;
    test.call.history.push(now);
    test.log({ kind: 'call', state: now, stateReason, eventReason });
    if (now === 'calling' && Number(calleeOf(eventInfo) ?? uid) === uid) {
      test.call.remoteUid = Number(callerOf(eventInfo));
      if (param('autoAccept')) calls.accept(test.call.remoteUid).catch((error) => reportError('call', error));
      else {
        $('#incoming-caller').textContent = `#${test.call.remoteUid} is calling`;
        $('#incoming-call').hidden = false;
      }
    }
    if (now !== 'calling') $('#incoming-call').hidden = true;
    const inCall = now === 'connecting' || now === 'connected';
    $('#call-view').hidden = !inCall;
    $('#call-view').dataset.state = now;
    $('#call-status').textContent = now === 'connected' ? 'In a call · your show is paused' : 'Connecting…';
    document.body.classList.toggle('in-call', inCall);
  });
  calls.on('callError', (error) => reportError('call', error));
  await calls.login(await fetchLoginToken(uid));
  await calls.prepareForCall({ localTracks: tracks, remoteView: $('#call-remote'), liveRoomId: room.roomId, pausesClient: client });
  test.sources.push(() => (calls.rtcClient ? [{ label: 'call', client: calls.rtcClient }] : []));
  test.acceptingCalls = true;
}

$('#accept-call').addEventListener('click', () => calls?.accept(test.call.remoteUid).catch((error) => reportError('call', error)));
$('#reject-call').addEventListener('click', () => calls?.reject(test.call.remoteUid).catch((error) => reportError('call', error)));
$('#hangup-button').addEventListener('click', () => calls?.hangup(test.call.remoteUid).catch((error) => reportError('hang up', error)));

test.ready = true;
