// What the three pages share: the business server's answers (config, tokens), who the user is,
// small DOM helpers, and the counters a test harness reads from `window.showroomTest`.
import ShowroomRTC from '../sdk/showroom-rtc.js';
import * as roomModule from '../sdk/room-service.js';

export { ShowroomRTC };
export const RoomService = roomModule.RoomService ?? roomModule.default;

const params = new URLSearchParams(location.search);
export const param = (name) => params.get(name);

// ---- the business server (`showroomctl web` in a local cluster) ----

async function getJSON(path) {
  const response = await fetch(path, { cache: 'no-store' });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

let configPromise;
/// The app id and the coordinators' addresses; the SDK is pointed at them once per page.
export function loadConfig() {
  configPromise ??= getJSON('/api/config').then((config) => {
    ShowroomRTC.setServers(config.coordinators);
    return config;
  });
  return configPromise;
}

/// An RTC token for `channel` ("" = any channel) as `role` ('publisher' | 'subscriber').
export async function fetchToken(channel, uid, role) {
  const query = new URLSearchParams({ channel, uid: String(uid), role });
  return (await getJSON(`/api/token?${query}`)).token;
}

/// The signaling (1v1 calls) login token.
export async function fetchLoginToken(uid) {
  return (await getJSON(`/api/login-token?uid=${uid}`)).token;
}

/// Tokens are asked for once per (channel, uid, role) and reused until they are 10 minutes old.
const tokenCache = new Map();
export function tokenProvider(channel, uid, role = 'subscriber') {
  const key = `${channel}|${uid}|${role}`;
  const cached = tokenCache.get(key);
  if (cached && performance.now() - cached.at < 600_000) return cached.token;
  const token = fetchToken(channel, uid, role);
  tokenCache.set(key, { token, at: performance.now() });
  token.catch(() => tokenCache.delete(key));
  return token;
}

// Browsers keep sound off until the user touches the page: a button offers it.
ShowroomRTC.onAutoplayFailed = () => {
  if (document.getElementById('unmute')) return;
  const button = element('button', {
    id: 'unmute', class: 'accent unmute', type: 'button', text: 'Tap for sound',
    onclick: async () => { await ShowroomRTC.resumeAudio().catch(() => {}); button.remove(); },
  });
  document.body.append(button);
};

// ---- who the user is ----

/// `?uid=` wins (tests, shared links); otherwise a random uid kept for this tab.
export function userId(storageKey) {
  const given = Number(param('uid'));
  if (Number.isInteger(given) && given > 0) return given;
  const kept = Number(sessionStorage.getItem(storageKey));
  if (kept > 0) return kept;
  const uid = 100_000 + Math.floor(Math.random() * 900_000_000);
  sessionStorage.setItem(storageKey, String(uid));
  return uid;
}

export function userName(uid) {
  return param('name') || `guest-${uid}`;
}

// ---- DOM ----

export const $ = (selector, root = document) => root.querySelector(selector);

export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/// A short message at the bottom of the screen; errors also land in the test counters.
export function notice(text, kind = 'info') {
  let box = $('#notice');
  if (!box) {
    box = element('div', { id: 'notice', role: 'status' });
    document.body.append(box);
  }
  box.textContent = text;
  box.dataset.kind = kind;
  box.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { box.hidden = true; }, kind === 'error' ? 6000 : 3000);
  if (kind === 'error') test.errors.push(text);
}

export function reportError(where, error) {
  console.error(where, error);
  notice(`${where}: ${error?.message ?? error}`, 'error');
}

/// Enum values may come as numbers or as protobuf names; `is(kind, 'PK', 2)` accepts both.
export function is(value, suffix, number) {
  if (value === number) return true;
  return typeof value === 'string' && (value === suffix || value.endsWith(`_${suffix}`));
}

export function formatCount(n) {
  if (n >= 10_000) return `${(n / 1000).toFixed(1)}k`;
  return String(n ?? 0);
}

// ---- chat ----

/// Renders chat messages into `list`, oldest first, keeping the last 100.
export function appendChat(list, message) {
  if (!message) return;
  if (list.querySelector(`[data-sequence="${message.sequence}"]`)) return;
  const item = element('li', { dataset: { sequence: String(message.sequence), uid: String(message.uid) } },
    element('b', { text: message.userName || `#${message.uid}` }), ' ', element('span', { text: message.text }));
  list.append(item);
  while (list.children.length > 100) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
  test.chat.push({ uid: message.uid, text: message.text, sequence: message.sequence });
}

// ---- counters for tests (window.showroomTest) ----

const clientIds = new WeakMap();
let nextClientId = 1;

/// Everything a test reads comes from the page's own decoders and state, never from a server.
export const test = {
  page: document.body?.dataset.page ?? '',
  uid: 0,
  roomId: null,
  channel: null,
  audience: null,
  /// Where the page's clients come from: functions returning [{label, client}].
  sources: [],
  /// Last seen stats per client instance and remote user, kept after a client leaves.
  seen: new Map(),
  swipes: [],
  call: { state: 'idle', reason: null, history: [], remoteUid: null, connectedAt: null },
  local: null,
  chat: [],
  errors: [],
  events: [],

  log(event) {
    test.events.push({ at: Math.round(performance.now()), ...event });
    if (test.events.length > 200) test.events.shift();
  },

  /// Reads every live client's remote video stats into `seen`.
  collect() {
    for (const source of test.sources) {
      let entries = [];
      try { entries = source() ?? []; } catch { /* a source between states */ }
      for (const { label, client } of entries) {
        if (!client?.getRemoteVideoStats) continue;
        if (!clientIds.has(client)) clientIds.set(client, nextClientId++);
        const id = clientIds.get(client);
        const channel = client.channelName;
        let stats = {};
        try { stats = client.getRemoteVideoStats() ?? {}; } catch { continue; }
        for (const [uid, s] of Object.entries(stats)) {
          const key = `${id}/${channel}/${uid}`;
          const before = test.seen.get(key);
          const raw = { frames: s.framesDecoded ?? 0, received: s.framesReceived ?? 0, errors: s.decodeErrors ?? 0 };
          // A user that left and came back has new counters: what the old ones counted is kept.
          const carried = before ? { ...before.carried } : { frames: 0, received: 0, errors: 0 };
          if (before && raw.frames < before.raw.frames) {
            for (const k of Object.keys(carried)) carried[k] += before.raw[k];
          }
          test.seen.set(key, {
            label, channel, uid: Number(uid), client: id, raw, carried,
            framesDecoded: carried.frames + raw.frames,
            framesReceived: carried.received + raw.received,
            decodeErrors: carried.errors + raw.errors,
            firstFrameMs: before?.firstFrameMs || s.firstFrameElapsed || null,
            width: s.receiveResolutionWidth ?? 0,
            height: s.receiveResolutionHeight ?? 0,
          });
        }
      }
    }
  },

  /// Per (label, channel, uid): frames decoded and decode errors summed over client instances
  /// (a room left and joined again counts on), first-frame time of the first instance.
  users() {
    test.collect();
    const byUser = new Map();
    for (const s of test.seen.values()) {
      const key = `${s.label}/${s.channel}/${s.uid}`;
      const sum = byUser.get(key);
      if (!sum) {
        const { raw, carried, ...counters } = s;
        byUser.set(key, { ...counters, clients: 1 });
      } else {
        sum.framesDecoded += s.framesDecoded;
        sum.framesReceived += s.framesReceived;
        sum.decodeErrors += s.decodeErrors;
        sum.firstFrameMs ??= s.firstFrameMs;
        if (s.width) { sum.width = s.width; sum.height = s.height; }
        sum.clients += 1;
      }
    }
    return [...byUser.values()];
  },

  /// Frames of the picture in `selector`'s canvas: how many distinct colours a 16 x 16 grid of
  /// samples holds (a blank or single-colour canvas has 1).
  canvasStats(selector) {
    const canvas = document.querySelector(`${selector} canvas`) ?? document.querySelector(selector);
    if (!(canvas instanceof HTMLCanvasElement) || !canvas.width || !canvas.height) return null;
    const probe = document.createElement('canvas');
    probe.width = 16; probe.height = 16;
    const context = probe.getContext('2d', { willReadFrequently: true });
    context.drawImage(canvas, 0, 0, 16, 16);
    const data = context.getImageData(0, 0, 16, 16).data;
    const colours = new Set();
    let sum = 0;
    for (let i = 0; i < data.length; i += 4) {
      colours.add(`${data[i] >> 3},${data[i + 1] >> 3},${data[i + 2] >> 3}`);
      sum += data[i] + data[i + 1] + data[i + 2];
    }
    return { width: canvas.width, height: canvas.height, distinctColours: colours.size, meanLevel: sum / (data.length / 4) / 3 };
  },

  snapshot() {
    return {
      page: test.page, uid: test.uid, roomId: test.roomId, channel: test.channel, audience: test.audience,
      users: test.users(), swipes: test.swipes, call: test.call, local: test.local?.() ?? null,
      chat: test.chat.length, chatTexts: test.chat.slice(-20).map((m) => m.text),
      errors: test.errors, feed: test.feed?.() ?? null,
    };
  },
};
window.showroomTest = test;
