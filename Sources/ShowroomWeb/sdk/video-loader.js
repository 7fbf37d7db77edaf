// Instant open and instant switch (VideoLoaderAPI, as Sources/ShowroomKit/VideoLoader.swift,
// AnchorBook.swift, SwipeWindow.swift and PreloadList.swift): rooms a viewer is about to see are
// joined ahead as audience without subscribing (prejoined), so showing one is a subscription on a
// channel already joined — and the edge's GOP cache makes its first frame immediate.

import ShowroomRTC from './showroom-rtc.js';
import { Emitter, ShowroomError, asShowroomError, log } from './wire.js';

/** How far the viewer is into a room's channel (VideoLoaderAPI's AnchorState, same numbers). */
export const AnchorState = Object.freeze({ IDLE: 0, PREJOINED: 1, JOINED_WITH_VIDEO: 2, JOINED_WITH_AUDIO_VIDEO: 3 });

/** The most rooms preloaded at once, and how long one counts as preloaded (the edge keeps its grant 30 s). */
const MAX_PRELOADS = 20;
const PRELOAD_KEPT_MS = 20_000;
const SWIPE_TAG = 'swipe';
const TOUCH_TAG = 'touch';

/**
 * Each channel's state is asked for by tags; its effective state is the highest any tag asks
 * for, and it is left when no tag holds it (VideoLoaderAPI's exConnectionDeps). Pure: changes
 * return the steps to take, in order.
 */
export class AnchorBook {
  constructor(localUid) {
    this.localUid = localUid;
    /** channel → {anchor, tags: Map<tag, state>} */
    this.channels = new Map();
  }

  stateOf(channel) {
    const hold = this.channels.get(channel);
    return hold ? Math.max(AnchorState.IDLE, ...hold.tags.values()) : AnchorState.IDLE;
  }

  get heldChannels() {
    return [...this.channels.keys()].sort();
  }

  /** `tag` asks for `state` of `anchor`'s channel; returns the steps. The viewer's own room is never joined. */
  set(state, anchor, tag) {
    if (!anchor?.channel || anchor.uid === this.localUid) return [];
    const before = this.stateOf(anchor.channel);
    const hold = this.channels.get(anchor.channel) ?? { anchor, tags: new Map() };
    hold.anchor = anchor; // a newer token replaces the held one, for the next join
    if (state === AnchorState.IDLE) hold.tags.delete(tag);
    else hold.tags.set(tag, state);
    if (hold.tags.size === 0) this.channels.delete(anchor.channel);
    else this.channels.set(anchor.channel, hold);
    return AnchorBook.transition(hold.anchor, before, this.stateOf(anchor.channel));
  }

  /** Every hold ends. */
  clean() {
    const held = [...this.channels.values()].sort((a, b) => (a.anchor.channel < b.anchor.channel ? -1 : 1));
    this.channels.clear();
    return held.flatMap((hold) => AnchorBook.transition(hold.anchor, Math.max(...hold.tags.values()), AnchorState.IDLE));
  }

  static transition(anchor, before, after) {
    if (before === after) return [];
    if (after === AnchorState.IDLE) return [{ op: 'leave', anchor }];
    const steps = [];
    if (before === AnchorState.IDLE) steps.push({ op: 'join', anchor });
    const videoBefore = before >= AnchorState.JOINED_WITH_VIDEO;
    const videoAfter = after >= AnchorState.JOINED_WITH_VIDEO;
    const audioBefore = before === AnchorState.JOINED_WITH_AUDIO_VIDEO;
    const audioAfter = after === AnchorState.JOINED_WITH_AUDIO_VIDEO;
    if (videoBefore !== videoAfter) steps.push({ op: 'video', anchor, on: videoAfter });
    if (audioBefore !== audioAfter) steps.push({ op: 'audio', anchor, on: audioAfter });
    return steps;
  }
}

/** Which rooms a swiping viewer holds: the one on screen with video (audio once settled), its neighbours prejoined. */
export class SwipeWindow {
  constructor(prejoinCount = 1) {
    this.prejoinCount = Math.max(0, prejoinCount | 0);
    this.states = new Map();
    this.anchors = new Map();
  }

  /** Returns `[{anchor, state}]` changes: the room on screen first, rooms leaving the window last. */
  focus(index, anchors, settled) {
    const wanted = new Map();
    if (index >= 0 && index < anchors.length) {
      for (let offset = -this.prejoinCount; offset <= this.prejoinCount; offset++) {
        const anchor = anchors[index + offset];
        if (!anchor) continue;
        const state = offset === 0 ? (settled ? AnchorState.JOINED_WITH_AUDIO_VIDEO : AnchorState.JOINED_WITH_VIDEO) : AnchorState.PREJOINED;
        if (state > (wanted.get(anchor.channel)?.state ?? AnchorState.IDLE)) wanted.set(anchor.channel, { anchor, state });
      }
    }
    const changes = [...wanted.entries()]
      .sort(([a, x], [b, y]) => y.state - x.state || (a < b ? -1 : 1))
      .filter(([channel, entry]) => this.states.get(channel) !== entry.state)
      .map(([, entry]) => entry);
    const known = new Map(anchors.map((anchor) => [anchor.channel, anchor]));
    for (const channel of [...this.states.keys()].sort()) {
      if (wanted.has(channel)) continue;
      const anchor = known.get(channel) ?? this.anchors.get(channel);
      if (anchor) changes.push({ anchor, state: AnchorState.IDLE });
    }
    this.states = new Map([...wanted].map(([channel, entry]) => [channel, entry.state]));
    this.anchors = new Map([...wanted].map(([channel, entry]) => [channel, entry.anchor]));
    return changes;
  }
}

/**
 * Instant open and switch of live rooms. An anchor is `{channel, uid, token}`: the room's channel,
 * its host's uid, and this viewer's token for the channel.
 *
 * ```js
 * const loader = new VideoLoader({ appId, uid: me, view: (anchor) => cardOf(anchor.channel) });
 * loader.on('first-frame', ({ channel, actualMs, perceivedMs }) => report(channel, perceivedMs));
 * loader.swipe(index, anchors);          // on scroll end
 * loader.touchDown(anchor);              // finger down on a card: video before the finger lifts
 * ```
 */
export class VideoLoader extends Emitter {
  /**
   * @param {{appId?: string, uid: number, servers?: string[], edge?: string, prejoinCount?: number,
   *   tokenProvider?: (channel: string, uid: number, role: string) => Promise<string>,
   *   view?: (anchor: object) => HTMLElement|string|null}} options
   */
  constructor(options = {}) {
    super();
    if (!Number.isInteger(options.uid) || options.uid < 0) throw new ShowroomError('INVALID_ARGUMENT', 'a video loader needs the viewer\'s uid');
    this.appId = options.appId ?? '';
    this.uid = options.uid;
    this.AnchorState = AnchorState;
    this._clientOptions = { mode: 'live', codec: 'vp8', role: 'audience', servers: options.servers, edge: options.edge };
    this._tokenProvider = options.tokenProvider ?? null;
    this._viewOf = options.view ?? null;
    this._book = new AnchorBook(this.uid);
    this._window = new SwipeWindow(options.prejoinCount ?? 1);
    /** channel → {client, anchor, wantVideo, wantAudio, view} */
    this._rooms = new Map();
    this._views = new Map();
    this._videoAskedAt = new Map();
    this._visibleAt = new Map();
    this._touched = new Map();
    this._preloadedAt = new Map();
    this._queue = Promise.resolve();
    this._queued = 0;
  }

  /** The channel's effective state. */
  stateOf(channel) {
    return this._book.stateOf(channel);
  }

  /** The channels joined now (prejoined or more). */
  get heldChannels() {
    return this._book.heldChannels;
  }

  /** The client joined to `channel`, if any. */
  clientOf(channel) {
    return this._rooms.get(channel)?.client ?? null;
  }

  /** `tag` asks for `state` of `anchor`'s room (VideoLoaderAPI's switchAnchorState); IDLE ends the tag's hold. */
  switchAnchorState(state, anchor, tag) {
    if (state >= AnchorState.JOINED_WITH_VIDEO) this.cardVisible(anchor);
    this._apply(this._book.set(state, anchor, tag));
  }

  /**
   * A swipe feed is at `index` of `anchors`: that room shows (and is heard once `settled`), the
   * rooms around it are prejoined, the rest left; up to 20 around are preloaded.
   */
  swipe(index, anchors, settled = true) {
    if (anchors[index]) this.cardVisible(anchors[index]);
    const steps = this._window.focus(index, anchors, settled).flatMap((change) => this._book.set(change.state, change.anchor, SWIPE_TAG));
    for (const anchor of this._touched.values()) steps.push(...this._book.set(AnchorState.IDLE, anchor, TOUCH_TAG));
    this._touched.clear();
    this._apply(steps);
    const around = anchors.filter((_, position) => Math.abs(position - index) <= MAX_PRELOADS / 2).slice(0, MAX_PRELOADS);
    this.preloadChannels(around);
  }

  /** Gets rooms ready to open (at most 20; each at most once per 20 s): edge found, session open, token checked. Nothing is joined. */
  preloadChannels(anchors) {
    const now = performance.now();
    for (const [channel, at] of this._preloadedAt) if (now - at >= PRELOAD_KEPT_MS) this._preloadedAt.delete(channel);
    const fresh = anchors.slice(0, MAX_PRELOADS).filter((anchor) => anchor?.channel && anchor.uid !== this.uid
      && !this._preloadedAt.has(anchor.channel) && this.stateOf(anchor.channel) === AnchorState.IDLE);
    for (const anchor of fresh) this._preloadedAt.set(anchor.channel, now);
    if (fresh.length === 0) return;
    this._enqueue(async () => {
      for (const anchor of fresh) {
        try {
          await ShowroomRTC.preload(this.appId, anchor.channel, await this._tokenOf(anchor), this.uid, this._clientOptions);
        } catch (error) {
          this.emit('error', { channel: anchor.channel, error: asShowroomError(error) });
        }
      }
    });
  }

  /** A room's card became visible: its perceived first-frame time counts from now. */
  cardVisible(anchor) {
    if (anchor?.channel && !this._visibleAt.has(anchor.channel)) this._visibleAt.set(anchor.channel, performance.now());
  }

  /** A finger went down on a room's card: its video starts before the finger lifts. */
  touchDown(anchor) {
    this.cardVisible(anchor);
    this._touched.set(anchor.channel, anchor);
    this._apply(this._book.set(AnchorState.JOINED_WITH_VIDEO, anchor, TOUCH_TAG));
  }

  /** The finger lifted: inside the card the room opens (the feed takes over), outside it the touch lets go. */
  touchUp(anchor, inside) {
    if (inside) return;
    this._touched.delete(anchor.channel);
    this._visibleAt.delete(anchor.channel);
    this._apply(this._book.set(AnchorState.IDLE, anchor, TOUCH_TAG));
  }

  /** Where `anchor`'s host plays; a room already showing moves there with its last picture at once. */
  renderView(anchor, element) {
    this._views.set(anchor.channel, element);
    const held = this._rooms.get(anchor.channel);
    const track = held?.client.remoteUsers.find((user) => user.uid === anchor.uid)?.videoTrack;
    if (track && element) track.play(element);
  }

  /** Leaves every room of every tag (VideoLoaderAPI's cleanCache). */
  cleanCache() {
    this._window = new SwipeWindow(this._window.prejoinCount);
    this._touched.clear();
    this._apply(this._book.clean());
  }

  /** Resolves once every step asked for so far is done. */
  settle() {
    return this._queue;
  }

  // ----------------------------------------------------------------------------------------------

  _apply(steps) {
    for (const step of steps) {
      if (step.op === 'video' && step.on) this._videoAskedAt.set(step.anchor.channel, performance.now());
      this._enqueue(() => this._perform(step));
    }
  }

  _enqueue(work) {
    this._queue = this._queue.then(work).catch((error) => log.warn('video loader step failed', error));
  }

  async _tokenOf(anchor) {
    if (anchor.token) return anchor.token;
    if (!this._tokenProvider) throw new ShowroomError('INVALID_ARGUMENT', `no token for '${anchor.channel}' and no tokenProvider`);
    return this._tokenProvider(anchor.channel, this.uid, 'subscriber');
  }

  async _perform(step) {
    const { anchor } = step;
    try {
      switch (step.op) {
        case 'join': return await this._join(anchor);
        case 'video': return await this._setVideo(anchor, step.on);
        case 'audio': return await this._setAudio(anchor, step.on);
        case 'leave': return await this._leave(anchor);
        default: return undefined;
      }
    } catch (error) {
      this.emit('error', { channel: anchor.channel, error: asShowroomError(error) });
    }
  }

  async _join(anchor) {
    if (this._rooms.has(anchor.channel)) return;
    const client = ShowroomRTC.createClient(this._clientOptions);
    const held = { client, anchor, wantVideo: false, wantAudio: false };
    this._rooms.set(anchor.channel, held);
    client.on('user-published', (user, mediaType) => {
      if (user.uid !== held.anchor.uid) return;
      if (mediaType === 'video' && held.wantVideo) this._subscribeVideo(held).catch(() => {});
      if (mediaType === 'audio' && held.wantAudio) this._subscribeAudio(held).catch(() => {});
    });
    client.on('first-frame-decoded', (user) => {
      if (user.uid === held.anchor.uid) this._decoded(held.anchor);
    });
    client.on('exception', (event) => log.debug(`'${anchor.channel}':`, event.msg));
    try {
      await client.join(this.appId, anchor.channel, await this._tokenOf(anchor), this.uid);
    } catch (error) {
      this._rooms.delete(anchor.channel);
      throw error;
    }
  }

  async _setVideo(anchor, on) {
    const held = this._rooms.get(anchor.channel);
    if (!held) return;
    held.wantVideo = on;
    const host = held.client.remoteUsers.find((user) => user.uid === anchor.uid);
    if (on) {
      if (host?.hasVideo) await this._subscribeVideo(held);
    } else {
      this._videoAskedAt.delete(anchor.channel);
      if (host) await held.client.unsubscribe(host, 'video');
    }
  }

  async _setAudio(anchor, on) {
    const held = this._rooms.get(anchor.channel);
    if (!held) return;
    held.wantAudio = on;
    const host = held.client.remoteUsers.find((user) => user.uid === anchor.uid);
    if (on) {
      if (host?.hasAudio) await this._subscribeAudio(held);
    } else if (host) {
      await held.client.unsubscribe(host, 'audio');
    }
  }

  async _subscribeVideo(held) {
    const track = await held.client.subscribe(held.anchor.uid, 'video');
    const view = this._views.get(held.anchor.channel) ?? this._viewOf?.(held.anchor);
    if (view && !track.isPlaying) track.play(view);
  }

  async _subscribeAudio(held) {
    const track = await held.client.subscribe(held.anchor.uid, 'audio');
    track.play();
  }

  async _leave(anchor) {
    const held = this._rooms.get(anchor.channel);
    this._videoAskedAt.delete(anchor.channel);
    this._visibleAt.delete(anchor.channel);
    if (!held) return;
    this._rooms.delete(anchor.channel);
    await held.client.leave();
  }

  /** VideoLoaderAPI's onFirstFrameRecv: ms from the state change (actual) and from the card becoming visible (perceived). */
  _decoded(anchor) {
    const asked = this._videoAskedAt.get(anchor.channel);
    if (asked === undefined) return;
    const now = performance.now();
    const visible = this._visibleAt.get(anchor.channel) ?? asked;
    this._videoAskedAt.delete(anchor.channel);
    this._visibleAt.delete(anchor.channel);
    this.emit('first-frame', {
      channel: anchor.channel, uid: anchor.uid, actualMs: Math.round(now - asked), perceivedMs: Math.round(now - Math.min(visible, asked)),
    });
  }
}

export default VideoLoader;
