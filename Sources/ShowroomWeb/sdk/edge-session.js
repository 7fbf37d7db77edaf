// Client sessions with edges: one WebSocket to an edge's /v1/edge is one session of the client
// protocol (showroom/edge/session.proto). Sessions are shared by every client of the page that
// joins a channel on the same edge (the joinChannelEx model: several channel connections per
// session), kept alive by heartbeats, judged by the edge's silence, and kept warm for a while
// after their last channel left so that the next room on that edge costs no handshake.

import {
  Kind, ShowroomError, WsLink, asShowroomError, decodeMessage, encodeMessage, frameMessage, log, num, randomId,
  showroom, SDK_VERSION,
} from './wire.js';

const edge = showroom.edge;

/** Bodies of the one-way messages an edge sends, by kind. */
const eventTypes = new Map([
  [Kind.CHANNEL_USER_JOINED, edge.UserJoined],
  [Kind.CHANNEL_USER_OFFLINE, edge.UserOffline],
  [Kind.REMOTE_TRACK_PUBLISHED, edge.RemoteTrackPublished],
  [Kind.REMOTE_TRACK_UNPUBLISHED, edge.RemoteTrackUnpublished],
  [Kind.REMOTE_VIDEO_STATE_CHANGED, edge.RemoteVideoStateChanged],
  [Kind.VOLUME_INDICATION, edge.VolumeIndication],
  [Kind.STREAM_MESSAGE, edge.StreamMessage],
  [Kind.CHANNEL_TOKEN_WILL_EXPIRE, edge.TokenWillExpire],
  [Kind.CHANNEL_PRIVILEGE_EXPIRED, edge.PrivilegeExpired],
  [Kind.KEYFRAME_REQUEST, edge.KeyframeRequest],
  [Kind.CHANNEL_CONNECTION_CLOSED, edge.ConnectionClosed],
  [Kind.EDGE_ERROR, edge.ErrorNotice],
  [Kind.FORWARD_STATE_CHANGED, edge.ForwardStateChanged],
]);

/** Defaults until the edge says otherwise in its session answer (as the Swift SDK). */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 1000;
const DEFAULT_HEARTBEAT_TIMEOUT_MS = 5000;
/** Silent heartbeat intervals before the channels report "reconnecting (interrupted)". */
const INTERRUPTED_AFTER_INTERVALS = 3;
/** How long a session without channels stays open. */
const IDLE_MS = 10_000;
/** Bytes the socket may hold unsent before video frames are dropped (live media: late is lost). */
export const MAX_BUFFERED_BYTES = 1 << 20;

const pageClientId = `web-${randomId(10)}`;
let sessionCounter = 0;

/** Open sessions by edge WebSocket URL (several per edge when two clients join one channel). */
const sessions = new Map();

/**
 * A session to the edge at `url` that does not hold `channel` yet, opened if needed. The caller
 * holds it for `channel` until it calls release.
 *
 * @returns {Promise<EdgeSession>}
 */
export async function acquireSession(url, edgeId, channel) {
  const list = sessions.get(url) ?? [];
  let session = list.find((candidate) => !candidate.closed && !candidate.draining && !candidate.holds(channel));
  if (!session) {
    session = new EdgeSession(url, edgeId);
    sessions.set(url, [...list, session]);
  }
  session.reserve(channel);
  try {
    await session.ready();
  } catch (error) {
    session.unreserve(channel);
    throw error;
  }
  return session;
}

/** The open sessions (for preferred edges in placements), best first. */
export function openSessions() {
  return [...sessions.values()].flat().filter((session) => session.isOpen && !session.draining);
}

/**
 * A client session with one edge. Channel connections register a handler per channel:
 * `{onEvent(kind, body), onMedia(header, payload, session), onEdgeLost(error, session),
 * onDraining(withinMs, session), onInterrupted(on, session), onSessionException(error)}`.
 */
export class EdgeSession {
  constructor(url, edgeId) {
    this.url = url;
    this.edgeId = edgeId || url;
    this.clientId = `${pageClientId}-${++sessionCounter}`;
    this.closed = false;
    this.draining = false;
    this.movedOutSent = false;
    this.limits = null;
    this.sessionId = 0;
    this.heartbeatIntervalMs = DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.heartbeatTimeoutMs = DEFAULT_HEARTBEAT_TIMEOUT_MS;
    this.rttMs = 0;
    this.interrupted = false;
    this.volumeIndication = null;
    /** channel → handler */
    this.handlers = new Map();
    this.#reserved = new Set();
    this.link = new WsLink(url, {
      // The edge reads up to max_message_bytes; what it sends is bounded by the same frames.
      maxInboundBytes: 8 << 20,
      onMessage: (envelope, attachment) => this.#received(envelope, attachment),
      onClose: (error) => this.#lost(error),
      onError: (error) => this.#exception(error),
    });
    this.#ready = this.#open();
    // A failed open is reported to whoever waits on ready().
    this.#ready.catch(() => {});
  }

  #ready;
  #reserved;
  #heartbeatTimer = null;
  #idleTimer = null;

  /** Resolves once the session is open. */
  ready() {
    return this.#ready;
  }

  get isOpen() {
    return !this.closed && this.sessionId !== 0 && this.link.isOpen;
  }

  /** Whether a channel connection of `channel` uses (or is about to use) this session. */
  holds(channel) {
    return this.#reserved.has(channel) || this.handlers.has(channel);
  }

  reserve(channel) {
    this.#reserved.add(channel);
    clearTimeout(this.#idleTimer);
  }

  unreserve(channel) {
    this.#reserved.delete(channel);
    this.#maybeIdle();
  }

  /** Routes `channel`'s events and media to `handler`. */
  attach(channel, handler) {
    this.#reserved.delete(channel);
    this.handlers.set(channel, handler);
    clearTimeout(this.#idleTimer);
  }

  /** Stops routing `channel` here; an unused session closes after its warm period. */
  detach(channel, handler) {
    if (!handler || this.handlers.get(channel) === handler) this.handlers.delete(channel);
    this.#reserved.delete(channel);
    this.#maybeIdle();
  }

  async #open() {
    await this.link.open(5000);
    const answer = await this.link.request(
      Kind.EDGE_OPEN_SESSION, edge.OpenSessionRequest, { clientId: this.clientId, sdkVersion: SDK_VERSION },
      edge.OpenSessionResponse, { timeoutMs: 5000 });
    this.sessionId = num(answer.sessionId) || 1;
    if (answer.heartbeatIntervalMs > 0) this.heartbeatIntervalMs = Math.max(100, answer.heartbeatIntervalMs);
    if (answer.heartbeatTimeoutMs > 0) this.heartbeatTimeoutMs = Math.max(this.heartbeatIntervalMs, answer.heartbeatTimeoutMs);
    this.limits = answer.limits ?? null;
    this.#heartbeatTimer = setInterval(() => this.#heartbeat(), this.heartbeatIntervalMs);
    log.debug(`session ${this.sessionId} open on ${this.url}`);
    return this;
  }

  /** The largest media payload the edge takes. */
  get maxFrameBytes() {
    return this.limits?.maxFrameBytes || 1 << 20;
  }

  /** Sends a request of this session and resolves with the answer's body. */
  request(kind, requestType, body, responseType, timeoutMs = 3000) {
    return this.link.request(kind, requestType, body, responseType, { timeoutMs });
  }

  /** Sends a media frame: `header` a MediaHeader (payloadSize and sendTimeUs set here). */
  sendMedia(header, payloadSize, writePayload) {
    if (!this.isOpen) return false;
    header.payloadSize = payloadSize;
    const envelope = encodeMessage(showroom.wire.Envelope, {
      kind: Kind.MEDIA_FRAME,
      requestId: 0n,
      body: encodeMessage(showroom.wire.MediaHeader, header),
      protocolVersion: showroom.wire.ProtocolVersion.PROTOCOL_VERSION_CURRENT,
    });
    return this.link.sendFramed(frameMessage(envelope, null, payloadSize, writePayload));
  }

  /** Asks for volume reports of every channel of the session (sent again when a session opens). */
  enableVolumeIndication(config) {
    this.volumeIndication = config;
    return this.request(Kind.ENABLE_VOLUME_INDICATION, edge.EnableVolumeIndicationRequest, config, edge.EnableVolumeIndicationResponse);
  }

  /** Tells a draining edge that this session's connections moved away. */
  sendMovedOut() {
    if (this.movedOutSent || !this.draining) return;
    this.movedOutSent = true;
    this.link.send(Kind.EDGE_MOVED_OUT, edge.MovedOut, {});
  }

  /** Closes the session politely (EDGE_CLOSE_SESSION, then the socket). */
  async close() {
    if (this.closed) return;
    this.#forget();
    try {
      if (this.link.isOpen) {
        await this.link.request(Kind.EDGE_CLOSE_SESSION, edge.CloseSessionRequest, {}, edge.CloseSessionResponse, { timeoutMs: 1000 });
      }
    } catch {
      // The socket closes anyway.
    }
    this.closed = true;
    this.link.close();
  }

  #forget() {
    clearInterval(this.#heartbeatTimer);
    clearTimeout(this.#idleTimer);
    const list = (sessions.get(this.url) ?? []).filter((session) => session !== this);
    if (list.length) sessions.set(this.url, list);
    else sessions.delete(this.url);
  }

  #maybeIdle() {
    if (this.closed || this.handlers.size > 0 || this.#reserved.size > 0) return;
    clearTimeout(this.#idleTimer);
    // A draining edge is not kept warm: nothing new may join there.
    this.#idleTimer = setTimeout(() => {
      if (this.handlers.size === 0 && this.#reserved.size === 0) this.close();
    }, this.draining ? 0 : IDLE_MS);
  }

  #heartbeat() {
    if (!this.isOpen) return;
    const silence = performance.now() - this.link.lastHeard;
    if (silence >= this.heartbeatTimeoutMs) {
      this.link.close(`silent for ${Math.round(silence)} ms`);
      return;
    }
    if (!this.interrupted && silence >= this.heartbeatIntervalMs * INTERRUPTED_AFTER_INTERVALS) {
      this.interrupted = true;
      for (const handler of this.handlers.values()) handler.onInterrupted?.(true, this);
    }
    const sent = performance.now();
    // As a request, so the edge answers and its silence shows; the answer also gives the RTT.
    this.request(Kind.EDGE_HEARTBEAT, edge.HeartbeatRequest, { clientTimeUs: BigInt(Math.round(sent * 1000)) }, edge.HeartbeatResponse,
      this.heartbeatTimeoutMs)
      .then(() => {
        this.rttMs = performance.now() - sent;
      })
      .catch(() => {});
  }

  #received(envelope, attachment) {
    if (this.interrupted) {
      this.interrupted = false;
      for (const handler of this.handlers.values()) handler.onInterrupted?.(false, this);
    }
    const kind = envelope.kind;
    if (kind === Kind.MEDIA_FRAME) {
      const header = decodeMessage(showroom.wire.MediaHeader, envelope.body, 'media header');
      if (num(header.payloadSize) !== attachment.byteLength) {
        throw new ShowroomError('MALFORMED_MESSAGE', `a media frame says ${header.payloadSize} bytes and carries ${attachment.byteLength}`);
      }
      this.handlers.get(header.channel)?.onMedia(header, attachment, this);
      return;
    }
    if (kind === Kind.EDGE_DRAINING) {
      const body = decodeMessage(edge.Draining, envelope.body, 'draining notice');
      if (this.draining) return;
      this.draining = true;
      for (const handler of [...this.handlers.values()]) handler.onDraining?.(body.withinMs, this);
      this.#maybeIdle();
      return;
    }
    if (kind === Kind.EDGE_SESSION_CLOSED) {
      const body = decodeMessage(edge.SessionClosed, envelope.body, 'session closed notice');
      this.link.close(`closed by the edge: ${body.reason?.message ?? 'no reason'}`);
      return;
    }
    const type = eventTypes.get(kind);
    if (!type) {
      // A kind this SDK does not know yet: newer edges may send more, old clients ignore it.
      log.debug(`ignored message kind ${kind} from ${this.url}`);
      return;
    }
    const body = decodeMessage(type, envelope.body, `${Kind[kind] ?? kind} event`);
    const handler = body.channel ? this.handlers.get(body.channel) : undefined;
    if (handler) {
      handler.onEvent(kind, body, this);
    } else if (kind === Kind.EDGE_ERROR) {
      this.#exception(ShowroomError.fromWire(body.error));
    }
  }

  #exception(error) {
    for (const handler of this.handlers.values()) {
      handler.onSessionException?.(error, this);
      return; // once is enough: reported by the first client of the session
    }
    log.warn(this.url, error.message);
  }

  #lost(error) {
    const wasOpen = this.sessionId !== 0;
    this.#forget();
    this.closed = true;
    if (!wasOpen) return;
    log.info(`session on ${this.url} lost: ${error.message}`);
    for (const handler of [...this.handlers.values()]) {
      try {
        handler.onEdgeLost(asShowroomError(error, 'UNAVAILABLE'), this);
      } catch (thrown) {
        log.error('edge-lost handler threw', thrown);
      }
    }
    this.handlers.clear();
  }
}
