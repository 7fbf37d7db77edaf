// The page `showroom-bench web` drives through WebDriver (window.bench): join → first frame
// painted, swipe → first frame painted with the video loader's prejoin, and a long watch whose
// counters the driver reads while it samples the JS heap. Every time is taken with the page's own
// clock; tokens are fetched before a timer starts (they come from the business server, not from
// the join).
import ShowroomRTC from '../sdk/showroom-rtc.js';
import * as loaderModule from '../sdk/video-loader.js';

const VideoLoader = loaderModule.VideoLoader ?? loaderModule.default;

/** How long a join or a swipe may take to paint its first frame (the Swift join benchmark's 5 s). */
const FIRST_FRAME_DEADLINE_MS = 5000;
/** A joined viewer watches this long before leaving: the edge's cached GOP decodes meanwhile, so its decode errors count. */
const JOIN_WATCH_MS = 300;
/** Joins start 0 – this many ms apart, landing at different points of the hosts' GOPs. */
const JOIN_SPREAD_MS = 200;
/** A swiping viewer stays this long on a room: the fastest thumb, long enough for the new neighbours' prejoins to be answered. */
const SWIPE_DWELL_MS = 250;
/** The video loader's feed for the watch: the rooms repeated this many times over. */
const WATCH_FEED_LENGTH = 1000;

const bench = { ready: false, error: null };
window.bench = bench;
/** The app id from the business server (kept for the SDK's `join` signature). */
let appId = '';

async function getJSON(path) {
  const response = await fetch(path, { cache: 'no-store' });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

async function subscriberToken(channel, uid) {
  const query = new URLSearchParams({ channel, uid: String(uid), role: 'subscriber' });
  return (await getJSON(`/api/token?${query}`)).token;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const describe = (error) => String(error?.message ?? error);

/**
 * Resolves with `performance.now()` in the first animation frame callback in which `drawn()`
 * holds: the canvas holds the picture and the frame that shows it is being produced. `drawn` may
 * throw to give up early; after `deadlineMs` it rejects.
 */
function painted(drawn, what, deadlineMs = FIRST_FRAME_DEADLINE_MS) {
  return new Promise((resolve, reject) => {
    let over = false;
    const timer = setTimeout(() => {
      over = true;
      reject(new Error(`${what}: no picture painted within ${deadlineMs} ms`));
    }, deadlineMs);
    const frame = () => {
      if (over) return;
      let done;
      try {
        done = drawn();
      } catch (error) {
        over = true;
        clearTimeout(timer);
        reject(error);
        return;
      }
      if (!done) {
        requestAnimationFrame(frame);
        return;
      }
      over = true;
      clearTimeout(timer);
      resolve(performance.now());
    };
    requestAnimationFrame(frame);
  });
}

function makeView() {
  const element = document.createElement('div');
  element.className = 'view';
  document.getElementById('stage').append(element);
  return element;
}

/**
 * Frames decoded and decode errors over clients that come and go: each read adds what a client's
 * counters moved since its last read (a user that left and came back starts again from 0). Clients
 * are held weakly, so a long watch keeps nothing of the rooms it left.
 */
class DecodeCounters {
  constructor() {
    this.framesDecoded = 0;
    this.decodeErrors = 0;
    this._last = new WeakMap();
  }

  read(client) {
    if (!client?.getRemoteVideoStats) return;
    const last = this._last.get(client) ?? new Map();
    for (const [uid, stats] of Object.entries(client.getRemoteVideoStats())) {
      const before = last.get(uid) ?? { frames: 0, errors: 0 };
      const now = { frames: stats.framesDecoded ?? 0, errors: stats.decodeErrors ?? 0 };
      const restarted = now.frames < before.frames || now.errors < before.errors;
      this.framesDecoded += restarted ? now.frames : now.frames - before.frames;
      this.decodeErrors += restarted ? now.errors : now.errors - before.errors;
      last.set(uid, now);
    }
    this._last.set(client, last);
  }
}

/**
 * One audience member, the seeds' order: a fresh client joins as audience, subscribes to the
 * host's video on `user-published` and plays it. Returns ms from the `join` call to the first
 * frame painted (`paintMs`) and to the SDK's `first-frame-decoded` (`decodedMs`), and the decode
 * errors while it watched.
 */
async function joinOnce(room, uid, token) {
  const client = ShowroomRTC.createClient({ mode: 'live', codec: 'vp8' });
  await client.setClientRole('audience');
  const view = makeView();
  let joined = null;
  let track = null;
  let decodedMs = null;
  let failure = null;
  client.on('first-frame-decoded', (user, elapsedMs) => {
    if (user.uid === room.uid && decodedMs === null) decodedMs = elapsedMs;
  });
  client.on('user-published', async (user, mediaType) => {
    if (mediaType !== 'video' || user.uid !== room.uid) return;
    try {
      await joined;
      const subscribed = await client.subscribe(user, 'video');
      subscribed.play(view);
      track = subscribed;
    } catch (error) {
      failure ??= error;
    }
  });
  try {
    const started = performance.now();
    joined = client.join(appId, room.channel, token, uid);
    await joined;
    const paintedAt = await painted(() => {
      if (failure) throw failure;
      return decodedMs !== null && track?.isPlaying;
    }, `join ${room.channel}`);
    await sleep(JOIN_WATCH_MS);
    const counters = new DecodeCounters();
    counters.read(client);
    return { paintMs: paintedAt - started, decodedMs, decodeErrors: counters.decodeErrors };
  } finally {
    await client.leave().catch(() => {});
    view.remove();
  }
}

/**
 * `n` audience members one after another, each a fresh client, over `rooms` ([{channel, uid}],
 * the hosts) in turn, uids from `uidBase`. Returns `{paintMs, decodedMs, decodeErrors, failures}`.
 */
async function joins(n, rooms, { uidBase = 700_000 } = {}) {
  const result = { paintMs: [], decodedMs: [], decodeErrors: 0, failures: [] };
  for (let i = 0; i < n; i++) {
    const room = rooms[i % rooms.length];
    const uid = uidBase + i;
    try {
      const token = await subscriberToken(room.channel, uid);
      await sleep(Math.random() * JOIN_SPREAD_MS);
      const one = await joinOnce(room, uid, token);
      result.paintMs.push(one.paintMs);
      if (one.decodedMs !== null) result.decodedMs.push(one.decodedMs);
      result.decodeErrors += one.decodeErrors;
    } catch (error) {
      result.failures.push(`${room.channel}: ${describe(error)}`);
    }
  }
  return result;
}

/** A video loader feed over `rooms` repeated (`length` entries), with the viewer's tokens; views per channel. */
async function makeFeed(rooms, uid, length) {
  const tokens = new Map();
  for (const room of rooms) tokens.set(room.channel, await subscriberToken(room.channel, uid));
  const anchors = Array.from({ length }, (_, k) => {
    const room = rooms[k % rooms.length];
    return { channel: room.channel, uid: room.uid, token: tokens.get(room.channel) };
  });
  const views = new Map();
  const viewOf = (channel) => {
    if (!views.has(channel)) views.set(channel, makeView());
    return views.get(channel);
  };
  const loader = new VideoLoader({ appId, uid, prejoinCount: 1, view: (anchor) => viewOf(anchor.channel) });
  const firstFrames = new Map();
  const errors = [];
  loader.on('first-frame', ({ channel, actualMs }) => firstFrames.set(channel, actualMs));
  loader.on('error', ({ channel, error }) => {
    errors.push(`${channel}: ${describe(error)}`);
    if (errors.length > 20) errors.shift();
  });
  const counters = new DecodeCounters();
  const trackOf = (anchor) => loader.clientOf(anchor.channel)?.remoteUsers.find((user) => user.uid === anchor.uid)?.videoTrack;
  return {
    loader, anchors, errors, counters, firstFrames,
    readCounters() {
      for (const channel of loader.heldChannels) counters.read(loader.clientOf(channel));
    },
    /** Moves the feed to `index`; resolves with ms to that room's first frame painted, and the loader's own figure. */
    async show(index) {
      const anchor = anchors[index];
      firstFrames.delete(anchor.channel);
      const started = performance.now();
      loader.swipe(index, anchors, true);
      const paintedAt = await painted(() => firstFrames.has(anchor.channel) && trackOf(anchor)?.isPlaying, `swipe to ${anchor.channel}`);
      return { paintMs: paintedAt - started, actualMs: firstFrames.get(anchor.channel) };
    },
    async close() {
      this.readCounters();
      loader.cleanCache();
      await loader.settle();
      for (const view of views.values()) view.remove();
      views.clear();
    },
  };
}

/**
 * A viewer swipes `n` times down a feed of `rooms` (at least 3: one prejoined above and below
 * the room on screen are other rooms). Returns `{paintMs, actualMs, decodeErrors, framesDecoded,
 * failures, heldMax}`; the feed's opening room is not a swipe.
 */
async function swipes(n, rooms, { uid = 800_000 } = {}) {
  const feed = await makeFeed(rooms, uid, n + 2);
  const result = { paintMs: [], actualMs: [], decodeErrors: 0, framesDecoded: 0, failures: [], heldMax: 0 };
  try {
    for (let index = 0; index <= n; index++) {
      try {
        const shown = await feed.show(index);
        if (index > 0) {
          result.paintMs.push(shown.paintMs);
          if (shown.actualMs !== undefined) result.actualMs.push(shown.actualMs);
        }
      } catch (error) {
        if (index > 0) result.failures.push(describe(error));
      }
      await feed.loader.settle();
      await sleep(SWIPE_DWELL_MS);
      result.heldMax = Math.max(result.heldMax, feed.loader.heldChannels.length);
      feed.readCounters();
    }
  } finally {
    await feed.close();
  }
  result.decodeErrors = feed.counters.decodeErrors;
  result.framesDecoded = feed.counters.framesDecoded;
  result.failures.push(...feed.errors);
  return result;
}

let watching = null;

/**
 * Starts the long watch: the feed's first room plays; with `swipeEverySeconds` > 0 the viewer
 * swipes to the next room that often. Returns at once; `watchCounters()` reads, `stopWatch()` ends it.
 */
async function startWatch(rooms, { uid = 900_000, swipeEverySeconds = 30 } = {}) {
  if (watching) throw new Error('a watch runs already');
  const feed = await makeFeed(rooms, uid, WATCH_FEED_LENGTH);
  try {
    await feed.show(0);
  } catch (error) {
    await feed.close();
    throw error;
  }
  const state = { feed, startedAt: performance.now(), index: 0, swipes: 0, failures: 0, timers: [] };
  watching = state;
  state.timers.push(setInterval(() => feed.readCounters(), 1000));
  if (swipeEverySeconds > 0) {
    state.timers.push(setInterval(() => {
      state.index = (state.index + 1) % WATCH_FEED_LENGTH;
      state.swipes++;
      feed.show(state.index).catch(() => { state.failures++; });
    }, swipeEverySeconds * 1000));
  }
  return watchCounters();
}

/** The watch's counters so far. */
function watchCounters() {
  if (!watching) return null;
  const { feed } = watching;
  feed.readCounters();
  return {
    seconds: (performance.now() - watching.startedAt) / 1000,
    framesDecoded: feed.counters.framesDecoded,
    decodeErrors: feed.counters.decodeErrors,
    swipes: watching.swipes,
    swipeFailures: watching.failures,
    held: feed.loader.heldChannels.length,
    errors: [...feed.errors],
  };
}

/** Ends the watch: every room left; returns the final counters. */
async function stopWatch() {
  if (!watching) return null;
  for (const timer of watching.timers) clearInterval(timer);
  const counters = watchCounters();
  await watching.feed.close();
  counters.framesDecoded = watching.feed.counters.framesDecoded;
  counters.decodeErrors = watching.feed.counters.decodeErrors;
  watching = null;
  return counters;
}

/** The whole watch in one call (for a person at the console; the benchmark samples the heap between start and stop). */
async function watch(seconds, rooms, options = {}) {
  await startWatch(rooms, options);
  await sleep(seconds * 1000);
  return stopWatch();
}

try {
  const config = await getJSON('/api/config');
  appId = config.appId ?? '';
  ShowroomRTC.setServers(config.coordinators);
  Object.assign(bench, { joins, swipes, startWatch, watchCounters, stopWatch, watch, ready: true });
} catch (error) {
  bench.error = describe(error);
}
