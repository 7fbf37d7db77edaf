// The browser RTC client, shaped like Agora's Web SDK 4.x: a client joins one channel on the
// edge the cluster's coordinators place it on, publishes local tracks, subscribes to remote
// users' tracks and plays them. When its edge is lost or drains, the client rejoins elsewhere by
// itself (as the Swift SDK's engine does: EngineState+Rejoin, EngineState+Move).

import { EdgeSession, MAX_BUFFERED_BYTES, acquireSession, openSessions } from './edge-session.js';
import {
  AUDIO_SAMPLE_RATE, LocalAudioTrack, LocalVideoTrack, RemoteAudioTrack, RemoteVideoTrack, autoplay, resumeAudio,
  videoEncoderConfig,
} from './media.js';
import {
  Cluster, Emitter, ErrorCodes, Kind, SDK_VERSION, ShowroomError, asShowroomError, enumName, getDefaultServers, log,
  hashString, nowMicroseconds, setDefaultServers, setLogLevel, showroom, sleep,
} from './wire.js';

export { ShowroomError } from './wire.js';
export { LocalAudioTrack, LocalVideoTrack, RemoteAudioTrack, RemoteVideoTrack } from './media.js';

const edgeProto = showroom.edge;
const TrackKind = showroom.wire.TrackKind;
const Codec = showroom.wire.Codec;
const ClientRole = edgeProto.ClientRole;

/** Connection states (Agora's names). */
export const ConnectionState = Object.freeze({
  DISCONNECTED: 'DISCONNECTED',
  CONNECTING: 'CONNECTING',
  CONNECTED: 'CONNECTED',
  RECONNECTING: 'RECONNECTING',
  DISCONNECTING: 'DISCONNECTING',
});

/** Channel names: 1-64 bytes of these characters (proto/README.md). */
const CHANNEL_NAME = /^[a-zA-Z0-9 !#$%&()+\-:;<=.>?@[\]^_{|}~,]{1,64}$/;

/** Automatic rejoin: 250 ms after the first failed attempt, doubling to 2 s, for 30 s (RejoinBackoff.swift). */
const REJOIN_WINDOW_MS = 30_000;
const REJOIN_FIRST_DELAY_MS = 250;
const REJOIN_MAX_DELAY_MS = 2000;
/** A viewer moving off a draining edge switches at the new edge's first keyframe, or after this. */
const MOVE_SWITCH_TIMEOUT_MS = 2000;
/** After a rejoin, users the new edge has not announced within this long are gone. */
const REJOIN_RECONCILE_MS = 2000;
/** Placements learnt from a preload are used this long (the edge keeps its grant 30 s). */
const PRELOAD_KEPT_MS = 20_000;
/** The most remote users a client keeps (hosts; audiences are invisible). */
const MAX_REMOTE_USERS = 1000;
/** Largest stream message passed to the app. */
const MAX_STREAM_MESSAGE_BYTES = 64 << 10;

/**
 * Where to go after a CHANNEL_ELSEWHERE refusal (null after any other error). The refusal names
 * the edge by its node id (and its ZeroMQ address, of no use here): that edge's WebSocket face
 * from the cluster status, or, when the status does not list it with one, wherever the
 * coordinators place the channel now. With edges given directly: the next of them, then (once
 * they are all tried) the named edge, if the page gave coordinators too.
 */
async function redirectTarget(error, target, placement, request) {
  if (error.code !== 'CHANNEL_ELSEWHERE') return null;
  // What sent the join to the wrong edge (a preload's placement) is out of date.
  preloadedPlacements.delete(request.channel);
  if (placement.edge) {
    const [next, ...rest] = target.alternatives ?? [];
    if (next) return { id: next, url: next, alternatives: rest };
  }
  let cluster = null;
  try {
    cluster = Cluster.for(placement.servers);
  } catch {
    return null; // edges given directly and no coordinators: nowhere else to ask
  }
  const edgeId = error.redirect?.edgeId;
  if (edgeId) {
    const find = async (fresh) => (await cluster.membersOf('edge', { fresh })).find((member) => member.id === edgeId);
    // The cached status may predate the edge (a new one, or one back): ask once more.
    const member = await find(false).catch(() => null) ?? await find(true).catch(() => null);
    if (member && member.url !== target.url) return { id: member.id, url: member.url };
  }
  return placeChannel({ servers: placement.servers }, { ...request, avoiding: null, fresh: true });
}

/** Placements learnt from preloads, by channel. */
const preloadedPlacements = new Map();

function trackKindOf(mediaType) {
  if (mediaType === 'video') return TrackKind.TRACK_KIND_VIDEO;
  if (mediaType === 'audio') return TrackKind.TRACK_KIND_AUDIO;
  throw new ShowroomError('INVALID_ARGUMENT', `a media type is 'video' or 'audio', got '${mediaType}'`);
}

function checkChannel(channel) {
  if (typeof channel !== 'string' || !CHANNEL_NAME.test(channel) || new TextEncoder().encode(channel).length > 64) {
    throw new ShowroomError('INVALID_ARGUMENT', `a channel name is 1-64 characters of a-z A-Z 0-9 space and !#$%&()+-:;<=.>?@[]^_{|}~, — got '${channel}'`);
  }
}

function checkUid(uid) {
  if (uid === null || uid === undefined || uid === '') return 0;
  const number = Number(uid);
  if (!Number.isInteger(number) || number < 0 || number > 0xffffffff) {
    throw new ShowroomError('INVALID_ARGUMENT', `a uid is an integer 0 - 4294967295, got '${uid}'`);
  }
  return number;
}

function isFinalRefusal(error) {
  // Refusals another attempt or another edge would not lift: the token, a ban, a bad argument.
  return (error.number >= 2000 && error.number < 3000) || ['BANNED', 'INVALID_ARGUMENT', 'CHANNEL_PRIVATE', 'UID_REPLACED'].includes(error.code);
}

/** The connection-state reason for an error that ended a connection. */
function reasonOf(error) {
  switch (error.code) {
    case 'BANNED': return 'UID_BANNED';
    case 'UID_REPLACED': return 'REPLACED';
    case 'PRIVILEGE_EXPIRED':
    case 'TOKEN_EXPIRED': return 'TOKEN_EXPIRED';
    case 'UNAVAILABLE':
    case 'DEADLINE_EXCEEDED': return 'NETWORK_ERROR';
    default: return (error.number >= 2000 && error.number < 3000) ? 'INVALID_TOKEN' : 'SERVER_ERROR';
  }
}

/** Where channels go: the coordinators (CHANNEL_PLACE), or one edge given directly. */
async function placeChannel({ servers, edge }, { channel, uid, token, audience, avoiding, fresh = false }) {
  if (edge) {
    // Edges given directly: the channel's pick among them (the same in every client), another
    // one after a failure; an edge that does not host the channel redirects the join.
    const edges = (Array.isArray(edge) ? edge : [edge]).filter(Boolean);
    const usable = edges.filter((url) => url !== avoiding);
    const list = usable.length ? usable : edges;
    const first = hashString(channel) % list.length;
    const ordered = [...list.slice(first), ...list.slice(0, first)];
    return { id: ordered[0], url: ordered[0], alternatives: ordered.slice(1) };
  }
  const cached = preloadedPlacements.get(channel);
  if (!fresh && cached && performance.now() - cached.at < PRELOAD_KEPT_MS && cached.id !== avoiding) return { id: cached.id, url: cached.url };
  const cluster = Cluster.for(servers);
  const preferredEdges = [...new Set(openSessions().map((session) => session.edgeId))].slice(0, 4);
  const answer = await cluster.request('coordinator', Kind.CHANNEL_PLACE, showroom.room.PlaceChannelRequest, {
    channel, unreachableEdge: avoiding ?? '', uid, token, audience, preferredEdges,
  }, showroom.room.PlaceChannelResponse, { key: channel });
  if (!answer.webSocketEndpoint) {
    throw new ShowroomError('UNAVAILABLE', `'${channel}' is placed on edge ${answer.edgeId || '?'}, which takes no browser sessions (no WebSocket endpoint)`);
  }
  return { id: answer.edgeId || answer.webSocketEndpoint, url: answer.webSocketEndpoint };
}

// ------------------------------------------------------------------------------------------------

/** A remote host in the channel (audience members are invisible). */
export class RemoteUser {
  constructor(uid) {
    /** @type {number} */
    this.uid = uid;
    this.hasAudio = false;
    this.hasVideo = false;
    /** @type {RemoteAudioTrack|undefined} */
    this.audioTrack = undefined;
    /** @type {RemoteVideoTrack|undefined} */
    this.videoTrack = undefined;
    Object.defineProperty(this, '_videoStats', {
      value: {
        framesReceived: 0, keyframesReceived: 0, framesDecoded: 0, decodeErrors: 0, framesDropped: 0, firstFrameAt: 0,
        firstFrameElapsed: 0, receiveBytes: 0, receiveResolutionWidth: 0, receiveResolutionHeight: 0, end2EndDelay: 0,
        state: 'STOPPED',
      },
    });
    Object.defineProperty(this, '_audioStats', { value: { framesReceived: 0, framesDecoded: 0, decodeErrors: 0, receiveBytes: 0 } });
    Object.defineProperty(this, '_confirmed', { value: true, writable: true });
  }
}

/**
 * One channel connection, Agora's `IAgoraRTCClient`: join, publish, subscribe, events.
 * Make it with `ShowroomRTC.createClient()`.
 */
export class ShowroomRTCClient extends Emitter {
  /** @param {{mode?: string, codec?: string, role?: 'host'|'audience', servers?: string[], edge?: string|string[]}} config */
  constructor(config = {}) {
    super();
    if (config.codec && config.codec !== 'vp8') throw new ShowroomError('INVALID_ARGUMENT', `only the vp8 codec is supported, got '${config.codec}'`);
    this.mode = config.mode ?? 'live';
    this.codec = 'vp8';
    this.connectionState = ConnectionState.DISCONNECTED;
    /** @type {number|undefined} */
    this.uid = undefined;
    /** @type {string|undefined} */
    this.channelName = undefined;
    /** 'host' or 'audience'; in 'rtc' mode everyone is a host. */
    this.role = config.role ?? (this.mode === 'rtc' ? 'host' : 'audience');
    /** @type {(LocalAudioTrack|LocalVideoTrack)[]} */
    this.localTracks = [];
    this._placementOptions = { servers: config.servers, edge: config.edge };
    this._appId = '';
    this._token = '';
    this._requestedUid = 0;
    this._generation = 0;
    this._session = null;
    this._edge = null;
    this._move = null;
    this._lingering = null;
    this._users = new Map();
    this._subscriptions = new Map();
    this._remoteMutes = new Set();
    this._sequence = { audio: 0, video: 0 };
    this._videoNeedsKeyframe = true;
    this._volumeIndication = null;
    this._joinCalledAt = 0;
    this._joinedAt = 0;
    this._reconcileTimer = null;
    this._tokenExpiredReported = false;
    this._mediaStats = {
      video: { framesSent: 0, keyframesSent: 0, sendBytes: 0, framesDropped: 0, keyframeRequests: 0 },
      audio: { framesSent: 0, sendBytes: 0, framesDropped: 0 },
      recvBytes: 0, lastStatsAt: 0, lastSendBytes: 0, lastRecvBytes: 0,
    };
    this._handler = {
      onEvent: (kind, body, session) => this._event(kind, body, session),
      onMedia: (header, payload, session) => this._media(header, payload, session),
      onEdgeLost: (error, session) => this._edgeLost(error, session),
      onDraining: (withinMs, session) => this._draining(session),
      onInterrupted: (on, session) => this._interrupted(on, session),
      onSessionException: (error) => this._exception(error),
      hasMovedFrom: (session) => this._session !== session || this._lingering === session || this._staysOn === session,
    };
    this._publisher = {
      sendVideo: (chunk, info) => this._sendVideo(chunk, info),
      sendAudio: (chunk, info) => this._sendAudio(chunk, info),
    };
    this._staysOn = null;
  }

  /** The hosts in the channel. @type {RemoteUser[]} */
  get remoteUsers() {
    return [...this._users.values()];
  }

  /**
   * Joins `channel` with `token` as `uid` (0 or null: the edge assigns one, if the token allows
   * any uid). Resolves with the uid.
   *
   * @param {string} appId kept for compatibility; the cluster checks the app in the token
   * @param {string} channel
   * @param {string} token AccessToken2 ("007…") with the join privilege for the channel and uid
   * @param {number|null} [uid]
   * @returns {Promise<number>}
   */
  async join(appId, channel, token, uid) {
    if (this.connectionState !== ConnectionState.DISCONNECTED) {
      throw new ShowroomError('INVALID_OPERATION', `join needs a disconnected client; it is ${this.connectionState}`);
    }
    checkChannel(channel);
    if (typeof token !== 'string' || token.length === 0 || token.length > 2048) {
      throw new ShowroomError('INVALID_ARGUMENT', 'join needs a token (1-2048 characters) from the business server');
    }
    this._appId = String(appId ?? '');
    this._requestedUid = checkUid(uid);
    this._token = token;
    this.channelName = channel;
    this._joinCalledAt = performance.now();
    this._tokenExpiredReported = false;
    const generation = ++this._generation;
    this._setState(ConnectionState.CONNECTING);
    try {
      const target = await placeChannel(this._placementOptions, this._placementRequest(null));
      const { session, answer, edge } = await this._connect(target, generation);
      if (generation !== this._generation) throw new ShowroomError('OPERATION_ABORTED', 'left before the join completed');
      this._adopt(session, edge, answer);
      this._joinedAt = performance.now();
      this._setState(ConnectionState.CONNECTED);
      return this.uid;
    } catch (thrown) {
      const error = asShowroomError(thrown, 'UNAVAILABLE');
      if (generation === this._generation) {
        this._generation++;
        this._setState(ConnectionState.DISCONNECTED, reasonOf(error));
        this.channelName = undefined;
      }
      throw error;
    }
  }

  /** Leaves the channel: unpublishes, leaves, and lets the edge session go. */
  async leave() {
    if (this.connectionState === ConnectionState.DISCONNECTED) return;
    this._generation++;
    this._setState(ConnectionState.DISCONNECTING, 'LEAVE');
    for (const track of this.localTracks) track._removeSink(this._publisher);
    this.localTracks = [];
    clearTimeout(this._reconcileTimer);
    const sessions = new Set([this._session, this._move?.session, this._lingering].filter(Boolean));
    this._session = null;
    this._move = null;
    this._lingering = null;
    const channel = this.channelName;
    await Promise.all([...sessions].map((session) => this._leaveOn(session, channel)));
    for (const user of this._users.values()) this._closeTracks(user);
    this._users.clear();
    this._subscriptions.clear();
    this._remoteMutes.clear();
    this.channelName = undefined;
    this.uid = undefined;
    this._setState(ConnectionState.DISCONNECTED, 'LEAVE');
  }

  /**
   * 'host' publishes (within the token's privileges) and is seen by the others; 'audience' only
   * subscribes and is invisible. Before join it sets the role joined with.
   */
  async setClientRole(role, options = {}) {
    if (role !== 'host' && role !== 'audience') throw new ShowroomError('INVALID_ARGUMENT', `a role is 'host' or 'audience', got '${role}'`);
    void options; // Agora's audience latency level: every audience here is low-latency.
    if (this.connectionState !== ConnectionState.CONNECTED) {
      this.role = role;
      return;
    }
    if (role === this.role) return;
    if (role === 'audience' && this.localTracks.length) await this.unpublish();
    await this._session.request(Kind.SET_CLIENT_ROLE, edgeProto.SetClientRoleRequest,
      { channel: this.channelName, role: role === 'host' ? ClientRole.CLIENT_ROLE_BROADCASTER : ClientRole.CLIENT_ROLE_AUDIENCE },
      edgeProto.SetClientRoleResponse);
    this.role = role;
  }

  /** Publishes local tracks (a host only): they are encoded and sent from now on. */
  async publish(tracks) {
    const list = (Array.isArray(tracks) ? tracks : [tracks]).filter(Boolean);
    this._requireConnected('publish');
    if (this.role !== 'host') throw new ShowroomError('ROLE_FORBIDS_PUBLISH', 'an audience cannot publish; setClientRole(\'host\') first');
    for (const track of list) {
      if (!(track instanceof LocalVideoTrack || track instanceof LocalAudioTrack)) {
        throw new ShowroomError('INVALID_ARGUMENT', 'publish takes local tracks made by ShowroomRTC.create…Track');
      }
      const same = this.localTracks.find((held) => held.trackMediaType === track.trackMediaType);
      if (same && same !== track) throw new ShowroomError('INVALID_OPERATION', `a ${track.trackMediaType} track is published already; unpublish it first`);
    }
    const next = [...new Set([...this.localTracks, ...list])];
    await this._updatePublishing(next);
    for (const track of list) {
      if (this.localTracks.includes(track)) continue;
      this.localTracks.push(track);
      if (track.trackMediaType === 'video') this._videoNeedsKeyframe = true;
      track._addSink(this._publisher);
    }
  }

  /** Stops publishing `tracks` (all when none given). */
  async unpublish(tracks) {
    const list = tracks === undefined ? [...this.localTracks] : (Array.isArray(tracks) ? tracks : [tracks]);
    for (const track of list) track?._removeSink?.(this._publisher);
    const next = this.localTracks.filter((track) => !list.includes(track));
    this.localTracks = next;
    if (this.connectionState === ConnectionState.CONNECTED) await this._updatePublishing(next).catch((error) => this._exception(error));
  }

  async _updatePublishing(tracks) {
    const options = {
      publishAudio: tracks.some((track) => track.trackMediaType === 'audio'),
      publishVideo: tracks.some((track) => track.trackMediaType === 'video'),
    };
    await this._session.request(Kind.UPDATE_CHANNEL_OPTIONS, edgeProto.UpdateChannelOptionsRequest,
      { channel: this.channelName, options }, edgeProto.UpdateChannelOptionsResponse);
  }

  /**
   * Subscribes to a remote user's video or audio; `user.videoTrack` / `user.audioTrack` is set
   * and returned. The edge sends a video track's current GOP at once, so the first frame decodes
   * right away.
   *
   * @param {RemoteUser|number} user
   * @param {'video'|'audio'} mediaType
   */
  async subscribe(user, mediaType) {
    this._requireConnected('subscribe');
    const track = trackKindOf(mediaType);
    const remote = this._userOf(user, true);
    const key = `${remote.uid}:${mediaType}`;
    const existing = mediaType === 'video' ? remote.videoTrack : remote.audioTrack;
    if (existing && this._subscriptions.get(key)) return existing;
    // The track is there before the request goes: the GOP the edge sends with its answer decodes.
    const made = mediaType === 'video'
      ? new RemoteVideoTrack(remote.uid, remote._videoStats, () => this._firstFrame(remote))
      : new RemoteAudioTrack(remote.uid, remote._audioStats);
    if (mediaType === 'video') remote.videoTrack = made;
    else remote.audioTrack = made;
    this._subscriptions.set(key, true);
    try {
      await this._session.request(Kind.SUBSCRIBE_TRACK, edgeProto.SubscribeTrackRequest,
        { channel: this.channelName, uid: remote.uid, track }, edgeProto.SubscribeTrackResponse);
    } catch (error) {
      this._subscriptions.delete(key);
      made._close();
      if (mediaType === 'video' && remote.videoTrack === made) remote.videoTrack = undefined;
      if (mediaType === 'audio' && remote.audioTrack === made) remote.audioTrack = undefined;
      throw asShowroomError(error);
    }
    return made;
  }

  /** Stops receiving a remote user's video or audio (both when no media type is given). */
  async unsubscribe(user, mediaType) {
    const remote = this._userOf(user, false);
    if (!remote) return;
    for (const type of mediaType ? [mediaType] : ['video', 'audio']) {
      const key = `${remote.uid}:${type}`;
      if (!this._subscriptions.has(key)) continue;
      this._subscriptions.delete(key);
      const track = type === 'video' ? remote.videoTrack : remote.audioTrack;
      track?._close();
      if (type === 'video') remote.videoTrack = undefined;
      else remote.audioTrack = undefined;
      if (this._session?.isOpen) {
        await this._session.request(Kind.UNSUBSCRIBE_TRACK, edgeProto.UnsubscribeTrackRequest,
          { channel: this.channelName, uid: remote.uid, track: trackKindOf(type) }, edgeProto.UnsubscribeTrackResponse)
          .catch((error) => this._exception(error));
      }
    }
  }

  /** Pauses (or resumes) a subscribed video without unsubscribing; resuming starts at the cached keyframe. */
  async setRemoteVideoMuted(user, muted) {
    this._requireConnected('setRemoteVideoMuted');
    const remote = this._userOf(user, true);
    await this._session.request(Kind.MUTE_REMOTE_TRACK, edgeProto.MuteRemoteTrackRequest,
      { channel: this.channelName, uid: remote.uid, track: TrackKind.TRACK_KIND_VIDEO, muted: Boolean(muted) }, edgeProto.MuteRemoteTrackResponse);
    if (muted) this._remoteMutes.add(remote.uid);
    else {
      this._remoteMutes.delete(remote.uid);
      remote.videoTrack?._restart();
    }
  }

  /** Replaces the connection's token in place (before it expires). */
  async renewToken(token) {
    if (typeof token !== 'string' || token.length === 0) throw new ShowroomError('INVALID_ARGUMENT', 'renewToken needs a token');
    this._token = token;
    this._tokenExpiredReported = false;
    const sessions = [this._session, this._move?.joined ? this._move.session : null].filter((session) => session?.isOpen);
    await Promise.all(sessions.map((session) => session.request(Kind.RENEW_CHANNEL_TOKEN, edgeProto.RenewChannelTokenRequest,
      { channel: this.channelName, token }, edgeProto.RenewChannelTokenResponse)));
  }

  /**
   * `volume-indicator` events every `intervalMs` (2 s by default, as Agora's) with the loudest
   * hosts of the channel.
   */
  enableAudioVolumeIndicator(intervalMs = 2000, smoothing = 3) {
    this._volumeIndication = {
      intervalMs: Math.max(100, Number(intervalMs) || 2000), smoothing: Math.max(0, Math.min(10, Number(smoothing) | 0)), reportVad: true,
    };
    if (this._session?.isOpen) this._session.enableVolumeIndication(this._volumeIndication).catch((error) => this._exception(error));
  }

  /** Sends data to every other user of the channel (a host, with the publish-data privilege). */
  async sendStreamMessage(payload, needRetry = false) {
    void needRetry; // messages travel in order over the session's WebSocket; nothing to retry
    this._requireConnected('sendStreamMessage');
    const data = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
    if (!(data instanceof Uint8Array)) throw new ShowroomError('INVALID_ARGUMENT', 'a stream message is a Uint8Array or a string');
    const limit = this._session.limits?.maxStreamMessageBytes || 1024;
    if (data.byteLength > limit) throw new ShowroomError('STREAM_MESSAGE_TOO_LARGE', `a stream message is at most ${limit} bytes, got ${data.byteLength}`);
    await this._session.request(Kind.SEND_STREAM_MESSAGE, edgeProto.SendStreamMessageRequest,
      { channel: this.channelName, streamId: 1, data }, edgeProto.SendStreamMessageResponse);
  }

  /** Agora's RTC stats of the connection. */
  getRTCStats() {
    const now = performance.now();
    const stats = this._mediaStats;
    const sendBytes = stats.video.sendBytes + stats.audio.sendBytes;
    const seconds = stats.lastStatsAt ? (now - stats.lastStatsAt) / 1000 : 0;
    const result = {
      Duration: this._joinedAt ? Math.floor((now - this._joinedAt) / 1000) : 0,
      UserCount: this._users.size + (this.connectionState === ConnectionState.CONNECTED ? 1 : 0),
      SendBytes: sendBytes,
      RecvBytes: stats.recvBytes,
      SendBitrate: seconds > 0 ? Math.round(((sendBytes - stats.lastSendBytes) * 8) / seconds) : 0,
      RecvBitrate: seconds > 0 ? Math.round(((stats.recvBytes - stats.lastRecvBytes) * 8) / seconds) : 0,
      RTT: Math.round(this._session?.rttMs ?? 0),
      OutgoingAvailableBandwidth: 0,
      Edge: this._edge?.id ?? '',
    };
    stats.lastStatsAt = now;
    stats.lastSendBytes = sendBytes;
    stats.lastRecvBytes = stats.recvBytes;
    return result;
  }

  /** Per remote user: frames received, decoded, decode errors, first frame time … */
  getRemoteVideoStats() {
    const out = {};
    for (const user of this._users.values()) out[user.uid] = { ...user._videoStats };
    return out;
  }

  /** Per remote user: audio frames received and decoded. */
  getRemoteAudioStats() {
    const out = {};
    for (const user of this._users.values()) out[user.uid] = { ...user._audioStats };
    return out;
  }

  getLocalVideoStats() {
    return { ...this._mediaStats.video };
  }

  getLocalAudioStats() {
    return { ...this._mediaStats.audio };
  }

  // ----------------------------------------------------------------------------------------------
  // Joining, rejoining, moving

  _placementRequest(avoiding) {
    return {
      channel: this.channelName, uid: this.uid ?? this._requestedUid, token: this._token, audience: this.role !== 'host', avoiding,
    };
  }

  _joinOptions() {
    const host = this.role === 'host';
    return {
      clientRole: host ? ClientRole.CLIENT_ROLE_BROADCASTER : ClientRole.CLIENT_ROLE_AUDIENCE,
      // Agora's model: nothing is sent before publish(), nothing received before subscribe().
      publishAudio: host && this.localTracks.some((track) => track.trackMediaType === 'audio'),
      publishVideo: host && this.localTracks.some((track) => track.trackMediaType === 'video'),
      publishData: host,
      autoSubscribeAudio: false,
      autoSubscribeVideo: false,
    };
  }

  /** Joins on `target` (following CHANNEL_ELSEWHERE redirects): `{session, answer, edge}`. */
  async _connect(target, generation) {
    for (let hop = 0; ; hop++) {
      const session = await acquireSession(target.url, target.id, this.channelName);
      if (generation !== this._generation) {
        session.unreserve(this.channelName);
        throw new ShowroomError('OPERATION_ABORTED', 'left before the join completed');
      }
      // Routed before the join goes: the user-joined and track events follow its answer at once.
      session.attach(this.channelName, this._handler);
      try {
        const answer = await session.request(Kind.JOIN_CHANNEL, edgeProto.JoinChannelRequest, {
          channel: this.channelName, uid: this.uid ?? this._requestedUid, token: this._token, options: this._joinOptions(),
        }, edgeProto.JoinChannelResponse, 5000);
        return { session, answer, edge: target };
      } catch (thrown) {
        session.detach(this.channelName, this._handler);
        const error = asShowroomError(thrown);
        const next = hop < 4 ? await redirectTarget(error, target, this._placementOptions, this._placementRequest(null)) : null;
        if (next) {
          target = next;
          continue;
        }
        throw error;
      }
    }
  }

  _adopt(session, edge, answer) {
    this._session = session;
    this._edge = edge;
    this.uid = answer.uid;
    this.role = answer.role === ClientRole.CLIENT_ROLE_BROADCASTER ? 'host' : 'audience';
    if (this._volumeIndication) session.enableVolumeIndication(this._volumeIndication).catch((error) => this._exception(error));
  }

  async _leaveOn(session, channel) {
    session.detach(channel, this._handler);
    if (!session.isOpen) return;
    await session.request(Kind.LEAVE_CHANNEL, edgeProto.LeaveChannelRequest, { channel }, edgeProto.LeaveChannelResponse, 1000)
      .catch(() => {});
  }

  /** The edge is gone (its socket broke, it went silent, or it closed the session). */
  _edgeLost(error, session) {
    if (this._move?.session === session) {
      this._move = null;
      return;
    }
    if (this._lingering === session) {
      this._lingering = null;
      return;
    }
    if (session !== this._session) return;
    if (this._move?.joined) {
      // The old edge closed while the move had joined the new one: switch now.
      this._switchOver();
      return;
    }
    this._rejoin('NETWORK_ERROR', { avoiding: session.edgeId, error });
  }

  /** Rejoins with the same token, uid, role, options and subscriptions, wherever the placement says. */
  async _rejoin(reason, { avoiding = null, elsewhere = null, error = null } = {}) {
    if (this.connectionState === ConnectionState.DISCONNECTING || this.connectionState === ConnectionState.DISCONNECTED) return;
    const generation = ++this._generation;
    const old = this._session;
    this._session = null;
    this._move = null;
    if (old && old !== this._lingering) old.detach(this.channelName, this._handler);
    this._setState(ConnectionState.RECONNECTING, reason);
    if (error) log.info(`rejoining '${this.channelName}': ${error.message}`);
    // First frames are reported again, counted from the rejoin.
    this._joinCalledAt = performance.now();
    for (const user of this._users.values()) {
      user.videoTrack?._restart();
      user._videoStats.firstFrameAt = 0;
    }
    const started = performance.now();
    let failures = 0;
    let target = null;
    for (;;) {
      if (generation !== this._generation) return;
      try {
        if (elsewhere) {
          target = await redirectTarget(elsewhere, this._edge ?? {}, this._placementOptions, this._placementRequest(null));
          elsewhere = null;
        }
        if (!target) target = await placeChannel(this._placementOptions, this._placementRequest(avoiding));
        const { session, answer, edge } = await this._connect(target, generation);
        if (generation !== this._generation) {
          await this._leaveOn(session, this.channelName);
          return;
        }
        this._adopt(session, edge, answer);
        this._restoreOn(session);
        this._videoNeedsKeyframe = true;
        for (const track of this.localTracks) if (track.trackMediaType === 'video') track.requestKeyframe();
        this._reconcileUsers();
        this._setState(ConnectionState.CONNECTED, 'REJOIN_SUCCEEDED');
        return;
      } catch (thrown) {
        const failure = asShowroomError(thrown, 'UNAVAILABLE');
        if (generation !== this._generation) return;
        if (target && (failure.code === 'UNAVAILABLE' || failure.code === 'DEADLINE_EXCEEDED')) avoiding = target.id;
        target = null;
        failures++;
        const delay = Math.min(REJOIN_MAX_DELAY_MS, REJOIN_FIRST_DELAY_MS * 2 ** (failures - 1));
        if (isFinalRefusal(failure) || performance.now() - started + delay >= REJOIN_WINDOW_MS) {
          this._giveUp(failure);
          return;
        }
        this._exception(failure);
        await sleep(delay);
      }
    }
  }

  /** Sets on a new edge the subscriptions and remote mutes the app had set. */
  _restoreOn(session) {
    for (const key of this._subscriptions.keys()) {
      const [uid, type] = key.split(':');
      session.request(Kind.SUBSCRIBE_TRACK, edgeProto.SubscribeTrackRequest,
        { channel: this.channelName, uid: Number(uid), track: trackKindOf(type) }, edgeProto.SubscribeTrackResponse)
        .catch((error) => this._exception(error));
    }
    for (const uid of this._remoteMutes) {
      session.request(Kind.MUTE_REMOTE_TRACK, edgeProto.MuteRemoteTrackRequest,
        { channel: this.channelName, uid, track: TrackKind.TRACK_KIND_VIDEO, muted: true }, edgeProto.MuteRemoteTrackResponse)
        .catch((error) => this._exception(error));
    }
  }

  /** After a rejoin the new edge announces who is there; users it does not announce are gone. */
  _reconcileUsers() {
    for (const user of this._users.values()) user._confirmed = false;
    clearTimeout(this._reconcileTimer);
    const generation = this._generation;
    this._reconcileTimer = setTimeout(() => {
      if (generation !== this._generation) return;
      for (const user of [...this._users.values()]) {
        if (!user._confirmed) this._userLeft(user.uid, 'ServerTimeOut');
      }
    }, REJOIN_RECONCILE_MS);
  }

  _giveUp(error) {
    this._generation++;
    const old = this._session;
    this._session = null;
    if (old) old.detach(this.channelName, this._handler);
    for (const track of this.localTracks) track._removeSink(this._publisher);
    this.localTracks = [];
    for (const user of this._users.values()) this._closeTracks(user);
    this._users.clear();
    this._subscriptions.clear();
    this._exception(error);
    this._setState(ConnectionState.DISCONNECTED, reasonOf(error));
  }

  /** EDGE_DRAINING: move make-before-break (join elsewhere first, leave after). */
  async _draining(session) {
    if (session !== this._session || this._move || this.connectionState !== ConnectionState.CONNECTED) return;
    const generation = this._generation;
    const move = { session: null, joined: false, from: session };
    this._move = move;
    try {
      const target = await placeChannel(this._placementOptions, this._placementRequest(session.edgeId));
      if (target.id === session.edgeId || target.url === session.url) throw new ShowroomError('UNAVAILABLE', 'no other edge to move to');
      const { session: next, edge } = await this._connect(target, generation);
      if (generation !== this._generation || this._move !== move) {
        await this._leaveOn(next, this.channelName);
        return;
      }
      move.session = next;
      move.edge = edge;
      move.joined = true;
      this._restoreOn(next);
      if (this._volumeIndication) next.enableVolumeIndication(this._volumeIndication).catch(() => {});
      const watches = [...this._subscriptions.keys()].some((key) => key.endsWith(':video'));
      if (this.role === 'host' || !watches) {
        this._switchOver();
      } else {
        // A viewer switches with the new edge's first keyframe (its GOP cache sends one at once).
        setTimeout(() => {
          if (this._move === move) this._switchOver();
        }, MOVE_SWITCH_TIMEOUT_MS);
      }
    } catch (error) {
      // Nowhere to go: stay on the draining edge until it closes, then rejoin as on a failure.
      if (this._move === move) this._move = null;
      this._staysOn = session;
      log.info(`'${this.channelName}' stays on draining edge ${session.edgeId}: ${asShowroomError(error).message}`);
      this._reportMovedOut(session);
    }
  }

  /** The move's new edge serves the connection from now on. */
  _switchOver() {
    const move = this._move;
    if (!move?.joined) return;
    this._move = null;
    const old = this._session;
    this._session = move.session;
    this._edge = move.edge;
    if (this.role === 'host' && this.localTracks.length && old?.isOpen) {
      // The old edge's viewers are served until they moved too.
      this._lingering = old;
      this._videoNeedsKeyframe = true;
      for (const track of this.localTracks) if (track.trackMediaType === 'video') track.requestKeyframe();
    } else if (old) {
      this._leaveOn(old, this.channelName);
    }
    if (old) this._reportMovedOut(old);
  }

  _reportMovedOut(session) {
    if ([...session.handlers.values()].every((handler) => handler.hasMovedFrom?.(session) ?? false)) session.sendMovedOut();
  }

  _interrupted(on, session) {
    if (session !== this._session) return;
    if (on && this.connectionState === ConnectionState.CONNECTED) this._setState(ConnectionState.RECONNECTING, 'INTERRUPTED');
    else if (!on && this.connectionState === ConnectionState.RECONNECTING) this._setState(ConnectionState.CONNECTED, 'RECOVERED');
  }

  // ----------------------------------------------------------------------------------------------
  // What the edge sends

  _event(kind, body, session) {
    if (session !== this._session) {
      // The draining edge, or the move's new one before the switch: only what concerns them.
      if (kind === Kind.KEYFRAME_REQUEST) this._keyframeRequested(body);
      if (kind === Kind.CHANNEL_CONNECTION_CLOSED && session === this._move?.session) this._move = null;
      return;
    }
    switch (kind) {
      case Kind.CHANNEL_USER_JOINED:
        this._userJoined(body.uid);
        break;
      case Kind.CHANNEL_USER_OFFLINE:
        this._userLeft(body.uid, ({ 1: 'Quit', 2: 'ServerTimeOut', 3: 'BecomeAudience', 4: 'ForwardStopped' })[body.reason] ?? 'Quit');
        break;
      case Kind.REMOTE_TRACK_PUBLISHED:
      case Kind.REMOTE_TRACK_UNPUBLISHED: {
        const mediaType = body.track === TrackKind.TRACK_KIND_VIDEO ? 'video' : body.track === TrackKind.TRACK_KIND_AUDIO ? 'audio' : null;
        if (!mediaType) break;
        if (kind === Kind.REMOTE_TRACK_PUBLISHED) this._published(body.uid, mediaType);
        else this._unpublished(body.uid, mediaType);
        break;
      }
      case Kind.REMOTE_VIDEO_STATE_CHANGED: {
        const user = this._users.get(body.uid);
        if (user) user._videoStats.state = enumName(edgeProto.RemoteVideoState, body.state, 'REMOTE_VIDEO_STATE_');
        break;
      }
      case Kind.VOLUME_INDICATION:
        if (this._volumeIndication) {
          const speakers = (body.speakers ?? []).slice(0, 32).map((speaker) => ({
            uid: speaker.uid, level: Math.min(100, speaker.volume), voiceActive: Boolean(speaker.voiceActive),
          }));
          this.emit('volume-indicator', speakers);
        }
        break;
      case Kind.STREAM_MESSAGE:
        if (body.data?.byteLength <= MAX_STREAM_MESSAGE_BYTES) this.emit('stream-message', body.uid, new Uint8Array(body.data));
        break;
      case Kind.CHANNEL_TOKEN_WILL_EXPIRE:
        this.emit('token-privilege-will-expire', body.expiresInMs);
        break;
      case Kind.CHANNEL_PRIVILEGE_EXPIRED:
        if (!this._tokenExpiredReported) {
          this._tokenExpiredReported = true;
          this.emit('token-privilege-did-expire', enumName(edgeProto.Privilege, body.privilege, 'PRIVILEGE_'));
        }
        break;
      case Kind.KEYFRAME_REQUEST:
        this._keyframeRequested(body);
        break;
      case Kind.CHANNEL_CONNECTION_CLOSED:
        this._connectionClosed(ShowroomError.fromWire(body.reason), session);
        break;
      case Kind.EDGE_ERROR: {
        const error = ShowroomError.fromWire(body.error);
        if (error.code === 'NOT_JOINED' || error.code === 'NO_SESSION') {
          // The edge forgot the connection (whatever the reason, it lives): rejoin rather than stay broken.
          this._rejoin('SERVER_ERROR', { error });
        } else {
          this._exception(error);
        }
        break;
      }
      default:
        break;
    }
  }

  _connectionClosed(error, session) {
    if (error.code === 'CHANNEL_ELSEWHERE') {
      // The channel moved: rejoin on the edge the refusal names (or wherever it is placed now).
      this._rejoin('SERVER_ERROR', { elsewhere: error, error });
      return;
    }
    if (isFinalRefusal(error) || error.code === 'PRIVILEGE_EXPIRED') {
      session.detach(this.channelName, this._handler);
      this._session = null;
      this._giveUp(error);
      return;
    }
    this._rejoin('SERVER_ERROR', { error });
  }

  _keyframeRequested(body) {
    if (body.track !== TrackKind.TRACK_KIND_VIDEO) return;
    this._mediaStats.video.keyframeRequests++;
    for (const track of this.localTracks) if (track.trackMediaType === 'video') track._keyframeRequestedByEdge();
  }

  _userJoined(uid) {
    const known = this._users.get(uid);
    if (known) {
      known._confirmed = true;
      return known;
    }
    if (this._users.size >= MAX_REMOTE_USERS) return null;
    const user = new RemoteUser(uid);
    this._users.set(uid, user);
    this.emit('user-joined', user);
    return user;
  }

  _userLeft(uid, reason) {
    const user = this._users.get(uid);
    if (!user) return;
    this._users.delete(uid);
    this._closeTracks(user);
    this._subscriptions.delete(`${uid}:video`);
    this._subscriptions.delete(`${uid}:audio`);
    this._remoteMutes.delete(uid);
    user.hasAudio = false;
    user.hasVideo = false;
    this.emit('user-left', user, reason);
  }

  _published(uid, mediaType) {
    const user = this._userJoined(uid);
    if (!user) return;
    const flag = mediaType === 'video' ? 'hasVideo' : 'hasAudio';
    if (user[flag]) return; // announced again after a rejoin
    user[flag] = true;
    this.emit('user-published', user, mediaType);
  }

  _unpublished(uid, mediaType) {
    const user = this._users.get(uid);
    if (!user) return;
    const flag = mediaType === 'video' ? 'hasVideo' : 'hasAudio';
    if (!user[flag]) return;
    user[flag] = false;
    // As Agora: an unpublished track is gone; subscribe again after the next user-published.
    if (this._subscriptions.has(`${uid}:${mediaType}`)) this.unsubscribe(user, mediaType).catch(() => {});
    this.emit('user-unpublished', user, mediaType);
  }

  _closeTracks(user) {
    user.videoTrack?._close();
    user.audioTrack?._close();
    user.videoTrack = undefined;
    user.audioTrack = undefined;
  }

  _media(header, payload, session) {
    if (session !== this._session) {
      const move = this._move;
      if (!(move?.joined && session === move.session && header.track === TrackKind.TRACK_KIND_VIDEO && header.keyframe)) return;
      this._switchOver();
    }
    this._mediaStats.recvBytes += payload.byteLength;
    const user = this._users.get(header.publisherUid);
    if (!user) return;
    if (header.track === TrackKind.TRACK_KIND_VIDEO) user.videoTrack?._receive(header, payload);
    else if (header.track === TrackKind.TRACK_KIND_AUDIO) user.audioTrack?._receive(header, payload);
  }

  _firstFrame(user) {
    const now = performance.now();
    const elapsed = Math.round(now - this._joinCalledAt);
    user._videoStats.firstFrameAt = now;
    user._videoStats.firstFrameElapsed = elapsed;
    this.emit('first-frame-decoded', user, elapsed);
  }

  // ----------------------------------------------------------------------------------------------
  // What this client sends

  _mediaSessions() {
    const out = [];
    if (this._session?.isOpen) out.push(this._session);
    if (this._lingering?.isOpen) out.push(this._lingering);
    return out;
  }

  _sendVideo(chunk, info) {
    const sessions = this._mediaSessions();
    const stats = this._mediaStats.video;
    if (sessions.length === 0 || this.connectionState !== ConnectionState.CONNECTED) {
      this._videoNeedsKeyframe = true;
      return;
    }
    if (sessions[0].link.bufferedAmount > MAX_BUFFERED_BYTES || chunk.byteLength > sessions[0].maxFrameBytes) {
      // The network is behind (or the frame too big): drop, and start again at a keyframe.
      stats.framesDropped++;
      this._videoNeedsKeyframe = true;
      for (const track of this.localTracks) if (track.trackMediaType === 'video') track.requestKeyframe();
      return;
    }
    if (this._videoNeedsKeyframe && !info.keyframe) return;
    this._videoNeedsKeyframe = false;
    const header = {
      channel: this.channelName, publisherUid: this.uid, track: TrackKind.TRACK_KIND_VIDEO, codec: Codec.CODEC_VP8,
      sequence: (this._sequence.video = (this._sequence.video + 1) >>> 0), captureTimeUs: info.captureUs, keyframe: info.keyframe,
      width: info.width, height: info.height, sendTimeUs: nowMicroseconds(),
    };
    for (const session of sessions) session.sendMedia({ ...header }, chunk.byteLength, (target) => chunk.copyTo(target));
    stats.framesSent++;
    stats.sendBytes += chunk.byteLength;
    if (info.keyframe) stats.keyframesSent++;
  }

  _sendAudio(chunk, info) {
    const sessions = this._mediaSessions();
    const stats = this._mediaStats.audio;
    if (sessions.length === 0 || this.connectionState !== ConnectionState.CONNECTED) return;
    if (sessions[0].link.bufferedAmount > MAX_BUFFERED_BYTES * 2) {
      stats.framesDropped++;
      return;
    }
    const header = {
      channel: this.channelName, publisherUid: this.uid, track: TrackKind.TRACK_KIND_AUDIO, codec: Codec.CODEC_OPUS,
      sequence: (this._sequence.audio = (this._sequence.audio + 1) >>> 0), captureTimeUs: info.captureUs, audioLevel: info.level,
      sendTimeUs: nowMicroseconds(),
    };
    for (const session of sessions) session.sendMedia({ ...header }, chunk.byteLength, (target) => chunk.copyTo(target));
    stats.framesSent++;
    stats.sendBytes += chunk.byteLength;
  }

  // ----------------------------------------------------------------------------------------------

  _requireConnected(what) {
    if (this.connectionState !== ConnectionState.CONNECTED || !this._session) {
      throw new ShowroomError('INVALID_OPERATION', `${what} needs a joined client; it is ${this.connectionState}`);
    }
  }

  _userOf(user, required) {
    const uid = typeof user === 'object' && user !== null ? user.uid : user;
    const found = this._users.get(Number(uid));
    if (!found && required) throw new ShowroomError('INVALID_REMOTE_USER', `user ${uid} is not a host in '${this.channelName}'`);
    return found;
  }

  _setState(state, reason) {
    const previous = this.connectionState;
    if (previous === state) return;
    this.connectionState = state;
    this.emit('connection-state-change', state, previous, reason);
  }

  _exception(error) {
    const failure = asShowroomError(error);
    this.emit('exception', { code: failure.code, number: failure.number, msg: failure.message, uid: this.uid });
  }
}

// ------------------------------------------------------------------------------------------------
// Tracks

/** A camera track (`createCameraVideoTrack`). */
export class CameraVideoTrack extends LocalVideoTrack {}

/** A microphone track (`createMicrophoneAudioTrack`). */
export class MicrophoneAudioTrack extends LocalAudioTrack {}

function videoConstraints(config = {}) {
  const { width, height, frameRate } = videoEncoderConfig(config.encoderConfig);
  const constraints = { width: { ideal: width }, height: { ideal: height }, frameRate: { ideal: frameRate } };
  if (config.cameraId) constraints.deviceId = { exact: config.cameraId };
  if (config.facingMode) constraints.facingMode = config.facingMode;
  return constraints;
}

function audioConstraints(config = {}) {
  const constraints = {
    echoCancellation: config.AEC ?? true, noiseSuppression: config.ANS ?? true, autoGainControl: config.AGC ?? true,
    channelCount: 1, sampleRate: AUDIO_SAMPLE_RATE,
  };
  if (config.microphoneId) constraints.deviceId = { exact: config.microphoneId };
  return constraints;
}

async function getUserMedia(constraints) {
  if (!navigator.mediaDevices?.getUserMedia) {
    throw new ShowroomError('NOT_SUPPORTED', 'this page cannot capture media (a secure context is needed: https:// or http://localhost)');
  }
  try {
    return await navigator.mediaDevices.getUserMedia(constraints);
  } catch (error) {
    const code = error?.name === 'NotAllowedError' ? 'PERMISSION_DENIED' : 'DEVICE_NOT_FOUND';
    throw new ShowroomError(code, `cannot capture ${Object.keys(constraints).join(' and ')}: ${error?.message ?? error}`);
  }
}

function audioBitrate(config = {}) {
  return { bitrate: config.encoderConfig?.bitrate ?? 32 };
}

// ------------------------------------------------------------------------------------------------

/**
 * The SDK's entry point (Agora's `AgoraRTC`).
 */
const ShowroomRTC = {
  VERSION: SDK_VERSION,
  ConnectionState,
  ErrorCode: ErrorCodes,

  /**
   * The cluster's coordinators (any members) as `ws://HOST:PORT/v1/node` URLs, for every client
   * and service made without a `servers` option.
   * @param {string[]} urls
   */
  setServers(urls) {
    setDefaultServers(urls);
  },

  /** The addresses given to setServers. */
  getServers() {
    return getDefaultServers();
  },

  /**
   * A client for one channel.
   * @param {{mode?: 'live'|'rtc', codec?: 'vp8', role?: 'host'|'audience', servers?: string[], edge?: string|string[]}} [config]
   *   `edge`: edges' `ws://…/v1/edge` addresses to use instead of the coordinators (one, or a list:
   *   the channel picks one, another after a failure; clusters without coordinators, tests).
   */
  createClient(config = {}) {
    return new ShowroomRTCClient(config);
  },

  /** A camera track. */
  async createCameraVideoTrack(config = {}) {
    const stream = await getUserMedia({ video: videoConstraints(config) });
    return new CameraVideoTrack(stream.getVideoTracks()[0], videoEncoderConfig(config.encoderConfig));
  },

  /** A microphone track (echo cancellation, noise suppression and gain control on by default). */
  async createMicrophoneAudioTrack(config = {}) {
    const stream = await getUserMedia({ audio: audioConstraints(config) });
    return new MicrophoneAudioTrack(stream.getAudioTracks()[0], audioBitrate(config));
  },

  /** A microphone and a camera track with one permission prompt: `[microphone, camera]`. */
  async createMicrophoneAndCameraTracks(audioConfig = {}, videoConfig = {}) {
    const stream = await getUserMedia({ audio: audioConstraints(audioConfig), video: videoConstraints(videoConfig) });
    return [
      new MicrophoneAudioTrack(stream.getAudioTracks()[0], audioBitrate(audioConfig)),
      new CameraVideoTrack(stream.getVideoTracks()[0], videoEncoderConfig(videoConfig.encoderConfig)),
    ];
  },

  /** A video track from any MediaStreamTrack (a canvas's captureStream(), a video element's). */
  createCustomVideoTrack({ mediaStreamTrack, frameRate, bitrateMax, width, height } = {}) {
    return new LocalVideoTrack(mediaStreamTrack, { frameRate, bitrateMax, width, height });
  },

  /** An audio track from any MediaStreamTrack. */
  createCustomAudioTrack({ mediaStreamTrack, encoderConfig } = {}) {
    return new LocalAudioTrack(mediaStreamTrack, { bitrate: encoderConfig?.bitrate });
  },

  /**
   * Gets a channel ready to join (VideoLoaderAPI's preloadChannel): finds its edge, opens the
   * session and has the edge check the token now. A join with the same channel, uid and token
   * within 20 s skips all three.
   * @param {{servers?: string[], edge?: string}} [options]
   */
  async preload(appId, channel, token, uid, options = {}) {
    void appId;
    checkChannel(channel);
    const number = checkUid(uid);
    let target = await placeChannel(options, { channel, uid: number, token, audience: true, avoiding: null });
    for (let hop = 0; ; hop++) {
      const session = await acquireSession(target.url, target.id, channel);
      try {
        await session.request(Kind.PRELOAD_CHANNEL, edgeProto.PreloadChannelRequest, { channel, uid: number, token }, edgeProto.PreloadChannelResponse);
        if (preloadedPlacements.size > 200) preloadedPlacements.clear();
        preloadedPlacements.set(channel, { id: target.id, url: target.url, at: performance.now() });
        return;
      } catch (thrown) {
        const next = hop < 4
          ? await redirectTarget(asShowroomError(thrown), target, options, { channel, uid: number, token, audience: true }).catch(() => null)
          : null;
        if (!next) throw asShowroomError(thrown);
        target = next;
      } finally {
        session.unreserve(channel);
      }
    }
  },

  /** Whether this browser has what the SDK needs. */
  checkSystemRequirements() {
    return typeof WebSocket === 'function' && typeof VideoDecoder === 'function' && typeof VideoEncoder === 'function'
      && typeof AudioDecoder === 'function' && typeof AudioEncoder === 'function' && typeof AudioContext === 'function'
      && globalThis.isSecureContext !== false;
  },

  /** Cameras and microphones (labels after a permission was granted). */
  async getDevices() {
    return navigator.mediaDevices.enumerateDevices();
  },

  async getCameras() {
    return (await navigator.mediaDevices.enumerateDevices()).filter((device) => device.kind === 'videoinput');
  },

  async getMicrophones() {
    return (await navigator.mediaDevices.enumerateDevices()).filter((device) => device.kind === 'audioinput');
  },

  /** Resumes audio output after autoplay was refused (call it from a click). */
  resumeAudio,

  /** 0 debug, 1 info, 2 warning (default), 3 error, 4 none. */
  setLogLevel,

  /** Called when audio cannot start without a user gesture. */
  get onAutoplayFailed() {
    return autoplay.onFailed;
  },
  set onAutoplayFailed(fn) {
    autoplay.onFailed = typeof fn === 'function' ? fn : null;
  },
};

export { ShowroomRTC, EdgeSession };
export default ShowroomRTC;
