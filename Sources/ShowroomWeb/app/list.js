// The room list: every open room as a card whose host plays muted and small while the card is on
// screen; touching a card starts its video before the finger lifts, releasing it opens the room.
import {
  RoomService, loadConfig, tokenProvider, userId, $, element, reportError, is, formatCount, test,
} from './common.js';
import * as loaderModule from '../sdk/video-loader.js';

const VideoLoader = loaderModule.VideoLoader ?? loaderModule.default;
const AnchorState = loaderModule.AnchorState ?? VideoLoader.AnchorState ??
  { IDLE: 0, PREJOINED: 1, JOINED_WITH_VIDEO: 2, JOINED_WITH_AUDIO_VIDEO: 3 };

const MAX_PREVIEWS = 8;       // small videos decoding at once (a phone shows 4 to 6 cards)
const REFRESH_MS = 10_000;

const config = await loadConfig();
const uid = userId('showroom.viewer.uid');
test.uid = uid;

const rooms = new RoomService({ tokenProvider });
const feedToken = await tokenProvider('', uid, 'subscriber');
/** Cards by room id: {room, node, preview, anchor, visible}. */
const cards = new Map();
const loader = new VideoLoader({
  appId: config.appId, uid, tokenProvider,
  view: (anchor) => [...cards.values()].find((card) => card.anchor.channel === anchor.channel)?.preview,
});
test.sources.push(() => Array.from(loader.heldChannels ?? [], (channel) => ({ label: 'preview', client: loader.clientOf(channel) })));
test.feed = () => [...cards.keys()];

loader.on('first-frame', ({ channel, actualMs }) => {
  const card = [...cards.values()].find((c) => c.anchor.channel === channel);
  card?.node.classList.add('playing');
  if (card) card.node.dataset.firstFrameMs = String(Math.round(actualMs));
  test.log({ kind: 'first-frame', channel, actualMs });
});

// Only cards on screen play, at most MAX_PREVIEWS of them.
const playing = new Set();
function updatePreviews() {
  const wanted = [...cards.values()].filter((card) => card.visible).slice(0, MAX_PREVIEWS);
  for (const card of wanted) {
    if (playing.has(card)) continue;
    playing.add(card);
    loader.cardVisible?.(card.anchor);
    loader.switchAnchorState(AnchorState.JOINED_WITH_VIDEO, card.anchor, 'list');
  }
  for (const card of [...playing]) {
    if (wanted.includes(card)) continue;
    playing.delete(card);
    loader.switchAnchorState(AnchorState.IDLE, card.anchor, 'list');
  }
}
const observer = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    const card = cards.get(entry.target.dataset.roomId);
    if (card) card.visible = entry.isIntersecting;
  }
  updatePreviews();
}, { threshold: 0.25 });

function openRoom(card) {
  location.href = `room.html?room=${encodeURIComponent(card.room.roomId)}`;
}

function makeCard(room) {
  const anchor = { channel: room.channel || room.roomId, uid: room.ownerUid, token: feedToken };
  const preview = element('div', { class: 'preview tile', dataset: { uid: String(room.ownerUid), role: 'host' } });
  const count = element('span', { class: 'pill count', dataset: { count: String(room.audienceCount ?? 0) } });
  const node = element('li', { class: 'card', tabindex: '0', dataset: { roomId: room.roomId, channel: anchor.channel } },
    preview,
    element('div', { class: 'card-caption' },
      element('strong', { text: room.name || room.roomId }),
      element('small', { text: room.ownerName || `#${room.ownerUid}` })),
    count,
    element('span', { class: 'badge', text: 'PK' }));
  const card = { room, node, preview, anchor, count, badge: node.querySelector('.badge'), visible: false };
  // Instant open: the touched card's video starts on touch-down, the room opens on release inside.
  node.addEventListener('pointerdown', () => loader.touchDown?.(anchor));
  node.addEventListener('pointerup', (event) => {
    const inside = node.contains(document.elementFromPoint(event.clientX, event.clientY));
    loader.touchUp?.(anchor, inside);
    if (inside) openRoom(card);
  });
  node.addEventListener('pointercancel', () => loader.touchUp?.(anchor, false));
  node.addEventListener('keydown', (event) => { if (event.key === 'Enter') openRoom(card); });
  return card;
}

function updateCard(card, room) {
  card.room = room;
  card.count.textContent = `${formatCount(room.audienceCount ?? 0)} watching`;
  card.count.dataset.count = String(room.audienceCount ?? 0);
  card.badge.hidden = !is(room.interaction?.kind, 'PK', 2);
}

async function refresh() {
  const { rooms: list } = await rooms.listRooms({ pageSize: 50 });
  const open = list.filter((room) => !is(room.state, 'CLOSED', 2));
  const ids = new Set(open.map((room) => room.roomId));
  for (const [roomId, card] of cards) {
    if (ids.has(roomId)) continue;
    observer.unobserve(card.node);
    card.node.remove();
    cards.delete(roomId);
    if (playing.delete(card)) loader.switchAnchorState(AnchorState.IDLE, card.anchor, 'list');
  }
  const listNode = $('#room-list');
  open.forEach((room, i) => {
    let card = cards.get(room.roomId);
    if (!card) {
      card = makeCard(room);
      cards.set(room.roomId, card);
      observer.observe(card.node);
    }
    updateCard(card, room);
    if (listNode.children[i] !== card.node) listNode.insertBefore(card.node, listNode.children[i] ?? null);
  });
  $('#empty').hidden = open.length > 0;
  // Rooms near the top are opened ahead, so a tap plays at once.
  loader.preloadChannels?.(open.slice(0, 20).map((room) => cards.get(room.roomId).anchor));
  updatePreviews();
}

addEventListener('pagehide', () => loader.cleanCache());

try {
  await refresh();
} catch (error) {
  reportError('loading rooms', error);
}
test.ready = true;
setInterval(() => refresh().catch((error) => reportError('loading rooms', error)), REFRESH_MS);
