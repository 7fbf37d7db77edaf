// CallAPI's 1v1 calls on a Showroom cluster (as Sources/ShowroomKit/CallClient.swift): signaling
// login, a long-poll loop for the call-signal node's notices, and call, cancel, accept, reject and
// hang up of calls the server owns. The call runs in its own private channel (minted by the
// server, with call-scoped tokens) on a second ShowroomRTC client.

import ShowroomRTC from './showroom-rtc.js';
import { Cluster, Emitter, Kind, ShowroomError, asShowroomError, log, showroom, sleep } from './wire.js';

const call = showroom.call;

/** CallAPI's states. */
export const CallState = Object.freeze({ IDLE: 0, PREPARED: 1, CALLING: 2, CONNECTING: 3, CONNECTED: 4, FAILED: 10 });

/** CallAPI's state reasons. */
export const CallStateReason = Object.freeze({
  NONE: 0, JOIN_RTC_FAILED: 1, MESSAGE_FAILED: 4, LOCAL_REJECTED: 5, REMOTE_REJECTED: 6, REMOTE_ACCEPTED: 7, LOCAL_ACCEPTED: 8,
  LOCAL_HANGUP: 9, REMOTE_HANGUP: 10, LOCAL_CANCELLED: 11, REMOTE_CANCELLED: 12, RECV_REMOTE_FIRST_FRAME: 13, CALLING_TIMEOUT: 14,
  REMOTE_CALL_BUSY: 17, REMOTE_CALLING_TIMEOUT: 18,
});

/** CallAPI's events. */
export const CallEvent = Object.freeze({
  NONE: 0, CALLING_TIMEOUT: 3, REMOTE_CALLING_TIMEOUT: 4, STATE_MISMATCH: 9, REMOTE_USER_RECV_CALL: 99, LOCAL_REJECTED: 100,
  REMOTE_REJECTED: 101, REMOTE_ACCEPTED: 103, LOCAL_ACCEPTED: 104, LOCAL_HANGUP: 105, REMOTE_HANGUP: 106, REMOTE_JOINED: 107,
  REMOTE_LEFT: 108, LOCAL_CANCELLED: 109, REMOTE_CANCELLED: 110, LOCAL_JOINED: 111, LOCAL_LEFT: 112, RECV_REMOTE_FIRST_FRAME: 113,
  REMOTE_CALL_BUSY: 117,
});

/** CallAPI's call types. */
export const CallType = Object.freeze({ VIDEO: 0, AUDIO: 1 });

const ACTIVE = new Set([CallState.CALLING, CallState.CONNECTING, CallState.CONNECTED]);
/** How long the call-signal node may hold a poll. */
const POLL_WAIT_MS = 10_000;
/** Calls whose notice sequence is remembered (to drop stale and repeated notices). */
const MAX_CALLS_REMEMBERED = 64;

function callInfoOf(wire) {
  if (!wire) return null;
  const out = {};
  for (const [key, value] of Object.entries(wire)) out[key] = typeof value === 'bigint' ? Number(value) : value;
  out.type = wire.type === call.CallType.CALL_TYPE_AUDIO ? 'audio' : 'video';
  out.extension = { ...(wire.extension ?? {}) };
  delete out.token; // the call token stays inside the client
  return out;
}

function remoteOf(info, uid) {
  return info.caller === uid ? info.callee : info.caller;
}

/**
 * A user's 1v1 calls.
 *
 * ```js
 * const calls = new CallClient({ appId, uid: 2001 });
 * calls.on('callStateChanged', (state, reason, event, info) => render(state));
 * await calls.login(loginToken);
 * await calls.prepareForCall({ remoteView: 'remote', localView: 'local' });
 * await calls.call(1001);
 * ```
 */
export class CallClient extends Emitter {
  /**
   * @param {{appId?: string, uid: number, servers?: string[], edge?: string, clientConfig?: object}} options
   */
  constructor(options = {}) {
    super();
    if (!Number.isInteger(options.uid) || options.uid <= 0) throw new ShowroomError('INVALID_ARGUMENT', 'a call client needs the user\'s uid');
    this.appId = options.appId ?? '';
    this.uid = options.uid;
    this.CallState = CallState;
    this.CallStateReason = CallStateReason;
    this.CallEvent = CallEvent;
    /** The local side's state. */
    this.state = CallState.IDLE;
    /** The current (or last) call. */
    this.currentCall = null;
    /** Milliseconds from the call's start to each step (CallAPI's costTimeMap). */
    this.timeline = {};
    /** The client the call's channel is joined on, while a call is on. */
    this.rtcClient = null;
    this._cluster = Cluster.for(options.servers);
    this._clientConfig = { mode: 'live', codec: 'vp8', role: 'host', servers: options.servers, edge: options.edge, ...(options.clientConfig ?? {}) };
    this._sessionId = '';
    this._nodeId = '';
    this._loginToken = '';
    this._callToken = '';
    this._config = { callTimeoutMs: 15000, userExtension: {}, firstFrameWaitingDisabled: false };
    this._sequences = new Map();
    this._steps = Promise.resolve();
    this._polling = 0;
    this._startedAt = 0;
    this._firstFrameSent = false;
    this._paused = null;
    this._ownTracks = null;
  }

  _request(kind, requestType, body, responseType, timeoutMs = 3000) {
    return this._cluster.request('callsignal', kind, requestType, body, responseType, { key: String(this.uid), timeoutMs });
  }

  /** Logs in to signaling with a login (RTM) token and starts receiving notices. */
  async login(token) {
    if (typeof token !== 'string' || !token) throw new ShowroomError('INVALID_ARGUMENT', 'login needs a token');
    await this._openSession(token);
    this._loginToken = token;
    if (this.state === CallState.IDLE) this.state = CallState.PREPARED;
    const generation = ++this._polling;
    this._pollLoop(generation);
  }

  async _openSession(token) {
    const answer = await this._request(Kind.CALL_LOGIN, call.LoginRequest, { uid: this.uid, token }, call.LoginResponse);
    this._sessionId = answer.sessionId;
    this._nodeId = answer.nodeId;
    this.emit('loggedIn', answer.nodeId);
    return answer;
  }

  /** Logs out; a call in progress is hung up first. */
  async logout() {
    if (this.currentCall && ACTIVE.has(this.state)) await this.hangup(remoteOf(this.currentCall, this.uid), 'logged out').catch(() => {});
    this._polling++;
    const sessionId = this._sessionId;
    this._sessionId = '';
    if (sessionId) await this._request(Kind.CALL_LOGOUT, call.LogoutRequest, { sessionId }, call.LogoutResponse).catch(() => {});
  }

  /** Renews the login token. */
  async renewToken(token) {
    const answer = await this._request(Kind.CALL_RENEW_TOKEN, call.RenewTokenRequest, { sessionId: this._sessionId, token }, call.RenewTokenResponse);
    this._loginToken = token;
    return Number(answer.tokenExpiresAtMs);
  }

  /** Who of `uids` (at most 100) is online, in a call or offline. */
  async presence(uids) {
    const answer = await this._request(Kind.CALL_PRESENCE, call.PresenceRequest, { uids: uids.slice(0, 100) }, call.PresenceResponse);
    const names = { [call.PresenceState.PRESENCE_STATE_ONLINE]: 'online', [call.PresenceState.PRESENCE_STATE_IN_CALL]: 'inCall' };
    return Object.fromEntries(answer.entries.map((entry) => [entry.uid, names[entry.state] ?? 'offline']));
  }

  /**
   * Sets what the next calls use; the state becomes prepared. Refused mid-call.
   * @param {{callTimeoutMs?: number, userExtension?: object, firstFrameWaitingDisabled?: boolean, localTracks?: object[],
   *   localView?: HTMLElement|string, remoteView?: HTMLElement|string, liveRoomId?: string, pausesClient?: object}} config
   */
  async prepareForCall(config = {}) {
    if (ACTIVE.has(this.state)) throw new ShowroomError('CALL_STATE_MISMATCH', `prepareForCall during a call (state ${this.state}); hang up first`);
    this._config = { callTimeoutMs: 15000, userExtension: {}, firstFrameWaitingDisabled: false, ...config };
    this.state = CallState.PREPARED;
    // As CallAPI's prepare sets up the local view: the camera is open before the call.
    const tracks = await this._localTracks();
    const video = tracks.find((track) => track.trackMediaType === 'video');
    if (video && config.localView) video.play(config.localView);
  }

  async _localTracks() {
    if (this._config.localTracks?.length) return this._config.localTracks;
    if (!this._ownTracks) this._ownTracks = await ShowroomRTC.createMicrophoneAndCameraTracks();
    return this._ownTracks;
  }

  /** Calls `remoteUid`: the answer comes as state changes (calling, connecting, connected, or prepared with the reason). */
  async call(remoteUid, { callType = 'video', callExtension = {} } = {}) {
    this._startedAt = performance.now();
    this.timeline = {};
    this._firstFrameSent = false;
    let answer;
    try {
      answer = await this._request(Kind.CALL_DIAL, call.DialRequest, {
        sessionId: this._sessionId,
        callee: remoteUid,
        type: callType === 'audio' ? call.CallType.CALL_TYPE_AUDIO : call.CallType.CALL_TYPE_VIDEO,
        extension: { ...this._config.userExtension, ...callExtension },
        timeoutMs: Math.max(0, Math.min(0xffffffff, this._config.callTimeoutMs | 0)),
        firstFrameWaitingDisabled: Boolean(this._config.firstFrameWaitingDisabled),
        liveRoomId: this._liveRoom(),
      }, call.DialResponse);
    } catch (error) {
      this.emit('callError', asShowroomError(error));
      throw error;
    }
    const wire = answer.call;
    // The answer names the channel and this side's token: the caller joins now, in order with the notices.
    if (wire && !wire.endReason && wire.channel && wire.token && wire.caller === this.uid) {
      this._enqueue(async () => {
        if (this.currentCall?.callId === wire.callId || ACTIVE.has(this.state)) return;
        this.currentCall = callInfoOf(wire);
        this._callToken = wire.token;
        await this._joinCall(this.currentCall, true);
      });
    }
  }

  /** Cancels the call this side made while it rings. */
  cancelCall() {
    return this._act(Kind.CALL_CANCEL);
  }

  /** Accepts the call from `remoteUid`. */
  accept(remoteUid) {
    void remoteUid;
    this._mark('acceptCall');
    return this._act(Kind.CALL_ACCEPT, '', this._liveRoom());
  }

  /** Rejects the call from `remoteUid`, saying why. */
  reject(remoteUid, reason = '') {
    void remoteUid;
    return this._act(Kind.CALL_REJECT, reason);
  }

  /** Hangs up the call with `remoteUid`, saying why. */
  hangup(remoteUid, reason = '') {
    void remoteUid;
    return this._act(Kind.CALL_HANGUP, reason);
  }

  /** Stops polling; the session stays until it times out (use logout). */
  close() {
    this._polling++;
  }

  _liveRoom() {
    return this._config.liveRoomId ?? this._config.pausesClient?.channelName ?? '';
  }

  async _act(kind, reason = '', liveRoomId = '') {
    const callId = this.currentCall?.callId ?? '';
    if (!callId) throw new ShowroomError('UNKNOWN_CALL', `there is no call to ${Kind[kind] ?? kind}`);
    try {
      await this._request(kind, call.CallActionRequest, { sessionId: this._sessionId, callId, reason: String(reason).slice(0, 256), liveRoomId },
        call.CallActionResponse);
    } catch (thrown) {
      const error = asShowroomError(thrown);
      this.emit('callError', error);
      // The server no longer holds the call: it is over here too.
      if (['UNKNOWN_CALL', 'CALL_ENDED'].includes(error.code) && this.currentCall?.callId === callId) this._enqueue(() => this._callLost());
      throw error;
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Notices

  async _pollLoop(generation) {
    let interrupted = false;
    while (generation === this._polling && this._sessionId) {
      try {
        const answer = await this._request(Kind.CALL_POLL, call.PollRequest, { sessionId: this._sessionId, maxWaitMs: POLL_WAIT_MS },
          call.PollResponse, POLL_WAIT_MS + 5000);
        if (generation !== this._polling) return;
        const moved = answer.nodeId && answer.nodeId !== this._nodeId;
        if (moved) {
          this._nodeId = answer.nodeId;
          this.emit('signalingMoved', answer.nodeId);
        }
        if (answer.tokenWillExpire) this.emit('tokenPrivilegeWillExpire');
        for (const notice of answer.notices.slice(0, 256)) this._enqueue(() => this._handle(notice));
        if (interrupted || moved) {
          interrupted = false;
          this._enqueue(() => this._resynchronize());
        }
      } catch (thrown) {
        if (generation !== this._polling) return;
        const error = asShowroomError(thrown);
        if (error.code === 'NOT_LOGGED_IN') {
          if (await this._reopen()) {
            this._enqueue(() => this._callLost());
            continue;
          }
          this._sessionId = '';
          this.emit('loggedOut', error);
          return;
        }
        interrupted = true;
        await sleep(200); // the node may be gone: the next poll goes to the user's new owner
      }
    }
  }

  async _reopen() {
    for (let attempt = 0; attempt < 5 && this._loginToken; attempt++) {
      try {
        await this._openSession(this._loginToken);
        return true;
      } catch {
        await sleep(200 * (attempt + 1));
      }
    }
    return false;
  }

  /** After polls were interrupted or moved: a call the server no longer holds fails here too. */
  async _resynchronize() {
    const callId = this.currentCall?.callId;
    if (!callId || !ACTIVE.has(this.state)) return;
    try {
      const answer = await this._request(Kind.CALL_TOKEN, call.CallActionRequest, { sessionId: this._sessionId, callId }, call.CallActionResponse);
      if (answer.call?.token) this._callToken = answer.call.token;
    } catch (thrown) {
      const error = asShowroomError(thrown);
      if (['UNKNOWN_CALL', 'CALL_ENDED', 'NOT_YOUR_CALL'].includes(error.code) && this.currentCall?.callId === callId) await this._callLost();
    }
  }

  _enqueue(step) {
    this._steps = this._steps.then(step).catch((error) => log.warn('call step failed', error));
  }

  /** Takes a call's notices in increasing sequence only. */
  _take(callId, sequence) {
    const last = this._sequences.get(callId) ?? -1;
    if (sequence <= last) return false;
    this._sequences.delete(callId);
    this._sequences.set(callId, sequence);
    if (this._sequences.size > MAX_CALLS_REMEMBERED) this._sequences.delete(this._sequences.keys().next().value);
    return true;
  }

  async _handle(notice) {
    const info = callInfoOf(notice.call);
    if (!info || !this._take(notice.callId, Number(notice.sequence))) return;
    const newState = Object.values(CallState).includes(notice.state) ? notice.state : CallState.FAILED;
    // A notice of an older call than the current one is history.
    if (this.currentCall && this.currentCall.callId !== notice.callId && newState !== CallState.CALLING) return;
    if (this.currentCall?.callId !== notice.callId) {
      this._firstFrameSent = false;
      if (info.callee === this.uid) {
        this.timeline = {};
        this._startedAt = performance.now();
      }
    }
    const before = this.state;
    this.state = newState;
    this.currentCall = info;
    if (notice.call?.token) this._callToken = notice.call.token;
    if (!this._startedAt) this._startedAt = performance.now();
    if (notice.event === CallEvent.REMOTE_USER_RECV_CALL) this._mark('remoteUserRecvCall');
    this.emit('callStateChanged', newState, notice.reason, notice.event, info);
    if (notice.event) this.emit('callEventChanged', notice.event, info);
    // An event without a change of state (remoteJoined, remoteLeft …) starts nothing again.
    if (newState === before) return;
    switch (newState) {
      case CallState.CALLING:
        await this._joinCall(info, info.caller === this.uid);
        break;
      case CallState.CONNECTING:
        if (info.callee === this.uid) await this._publishCall(info);
        await this._pauseLive(true);
        break;
      case CallState.CONNECTED:
        this._mark('connected');
        this.emit('callConnected', info);
        break;
      default:
        await this._leaveCall(info, before === CallState.CONNECTED);
        break;
    }
  }

  async _callLost() {
    if (!this.currentCall || !ACTIVE.has(this.state)) return;
    const before = this.state;
    this.state = CallState.FAILED;
    this.emit('callStateChanged', CallState.FAILED, CallStateReason.MESSAGE_FAILED, CallEvent.NONE, this.currentCall);
    await this._leaveCall(this.currentCall, before === CallState.CONNECTED);
  }

  async _joinCall(info, publish) {
    if (!info.channel || this.rtcClient || !this._callToken) return;
    const client = ShowroomRTC.createClient(this._clientConfig);
    this.rtcClient = client;
    const remote = remoteOf(info, this.uid);
    client.on('user-joined', (user) => {
      if (user.uid === remote) this._mark('remoteUserJoinChannel');
    });
    client.on('user-published', async (user, mediaType) => {
      if (user.uid !== remote) return;
      try {
        const track = await client.subscribe(user, mediaType);
        if (mediaType === 'video' && this._config.remoteView) track.play(this._config.remoteView);
        if (mediaType === 'audio') {
          track.play();
          if (info.type === 'audio') this._firstFrame(info);
        }
      } catch (error) {
        this.emit('callError', asShowroomError(error));
      }
    });
    client.on('first-frame-decoded', (user) => {
      if (user.uid === remote) this._firstFrame(info);
    });
    client.on('token-privilege-will-expire', () => this._renewCallToken(info));
    try {
      await client.join(this.appId, info.channel, this._callToken, this.uid);
      this._mark('localUserJoinChannel');
      if (publish) await this._publishCall(info);
    } catch (thrown) {
      const error = asShowroomError(thrown);
      // Banned: the call ended while the join was on its way; the notice that says so follows.
      if (error.code !== 'BANNED') this.emit('callError', error);
    }
  }

  async _publishCall(info) {
    const client = this.rtcClient;
    if (!client || client.connectionState !== 'CONNECTED') return;
    const tracks = (await this._localTracks()).filter((track) => info.type === 'video' || track.trackMediaType === 'audio');
    await client.publish(tracks);
    this._mark('localFirstFrameDidPublish');
  }

  /** Reports the remote party's first frame to the server, once per call. */
  _firstFrame(info) {
    if (this._firstFrameSent || this.currentCall?.callId !== info.callId) return;
    this._firstFrameSent = true;
    this._mark('recvFirstFrame');
    this._request(Kind.CALL_FIRST_FRAME, call.CallActionRequest, { sessionId: this._sessionId, callId: info.callId }, call.CallActionResponse)
      .catch((error) => this.emit('callError', asShowroomError(error)));
  }

  /** Call tokens last two minutes: a fresh one comes from the call-signal node while the call goes on. */
  async _renewCallToken(info) {
    try {
      const answer = await this._request(Kind.CALL_TOKEN, call.CallActionRequest, { sessionId: this._sessionId, callId: info.callId },
        call.CallActionResponse);
      this._callToken = answer.call.token;
      await this.rtcClient?.renewToken(answer.call.token);
    } catch (thrown) {
      const error = asShowroomError(thrown);
      if (error.code !== 'CALL_ENDED') this.emit('callError', error);
    }
  }

  async _leaveCall(info, wasConnected) {
    const client = this.rtcClient;
    this.rtcClient = null;
    this._callToken = '';
    if (client) await client.leave().catch(() => {});
    await this._pauseLive(false);
    if (wasConnected) {
      const duration = info.connectedAtMs > 0 && info.endedAtMs >= info.connectedAtMs
        ? info.endedAtMs - info.connectedAtMs : Math.round(performance.now() - this._startedAt);
      this.emit('callDisconnected', info, info.endedBy, duration);
    }
  }

  /** A host stops publishing on its live client while in a call, and resumes after. */
  async _pauseLive(pause) {
    const live = this._config.pausesClient;
    if (!live) return;
    if (pause && !this._paused) {
      this._paused = [...live.localTracks];
      await live.unpublish(this._paused).catch((error) => this.emit('callError', asShowroomError(error)));
    } else if (!pause && this._paused) {
      const tracks = this._paused;
      this._paused = null;
      if (live.connectionState === 'CONNECTED' && tracks.length) {
        await live.publish(tracks).catch((error) => this.emit('callError', asShowroomError(error)));
      }
    }
  }

  _mark(step) {
    if (!this._startedAt || this.timeline[step] !== undefined) return;
    this.timeline[step] = Math.round(performance.now() - this._startedAt);
  }
}

export default CallClient;
