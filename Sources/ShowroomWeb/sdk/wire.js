// What every module of the SDK shares: the WebSocket framing of proto/README.md, request and
// response correlation, errors with their wire codes, the media clock, and the cluster directory
// (coordinators and call-signal nodes found through CLUSTER_STATUS).

import { showroom } from './proto/showroom.js';

export { showroom };

/** SDK version, sent to edges with each session. */
export const SDK_VERSION = 'showroom-web/0.1.0';

/** Message kinds by their short names (`Kind.JOIN_CHANNEL === 204`). */
export const Kind = shortNames(showroom.wire.MessageKind, 'MESSAGE_KIND_');

/** Error codes by their short names (`ErrorCodes.TOKEN_EXPIRED === 2004`). */
export const ErrorCodes = shortNames(showroom.wire.ErrorCode, 'ERROR_CODE_');

const errorNames = new Map(Object.entries(ErrorCodes).map(([name, number]) => [number, name]));

function shortNames(enumObject, prefix) {
  const out = {};
  for (const [name, value] of Object.entries(enumObject)) {
    if (typeof value === 'number' && name.startsWith(prefix)) out[name.slice(prefix.length)] = value;
  }
  return Object.freeze(out);
}

/** The short name of an enum value (`enumName(showroom.wire.TrackKind, 2, 'TRACK_KIND_')` → 'VIDEO'). */
export function enumName(enumObject, value, prefix) {
  for (const [name, number] of Object.entries(enumObject)) {
    if (number === value && name.startsWith(prefix)) return name.slice(prefix.length);
  }
  return String(value);
}

/**
 * An error of the SDK or of the cluster. `code` is the wire code's name without its prefix
 * ('TOKEN_EXPIRED', 'CHANNEL_ELSEWHERE', 'DEADLINE_EXCEEDED' …): programs decide on it, never on
 * the message. `number` is the wire number (0 for errors made in the SDK with no wire code).
 */
export class ShowroomError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{number?: number, redirect?: object|null}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message);
    this.name = 'ShowroomError';
    this.code = code;
    this.number = extra.number ?? ErrorCodes[code] ?? 0;
    /** With CHANNEL_ELSEWHERE: the edge the channel is on (`edgeId`, its ZeroMQ `clientEndpoint`). */
    this.redirect = extra.redirect ?? null;
  }

  /** An error as it came on the wire (`showroom.wire.Error`). */
  static fromWire(error) {
    const number = Number(error?.code ?? 0);
    // A code this SDK does not know keeps its number; its range says what area it belongs to.
    const code = errorNames.get(number) ?? `E${number}`;
    return new ShowroomError(code, `E${number} ${error?.message || code}`, { number, redirect: error?.redirect ?? null });
  }

  /** Whether retrying elsewhere may help. */
  get isTransient() {
    return ['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'NO_COORDINATOR', 'NO_CALL_SIGNAL', 'NO_EDGE_AVAILABLE', 'INTERNAL'].includes(this.code);
  }
}

/** Wraps anything thrown into a ShowroomError. */
export function asShowroomError(error, code = 'INTERNAL') {
  if (error instanceof ShowroomError) return error;
  return new ShowroomError(code, String(error?.message ?? error));
}

/** Encodes `body` as protobuf type `type`. */
export function encodeMessage(type, body) {
  const out = type.encode(body ?? {});
  return out instanceof Uint8Array ? out : out.finish();
}

/** Decodes a body; a body that does not decode is a MALFORMED_MESSAGE error. */
export function decodeMessage(type, bytes, what = 'message') {
  try {
    return type.decode(bytes ?? new Uint8Array(0));
  } catch (error) {
    throw new ShowroomError('MALFORMED_MESSAGE', `the server sent a ${what} that does not decode: ${error?.message ?? error}`);
  }
}

/** Microseconds on the page's monotonic media clock (MediaHeader capture and send times). */
export function nowMicroseconds() {
  return Math.round(performance.now() * 1000);
}

/** A uint64 from the wire as a Number (exact below 2^53, which every count and time here is). */
export function num(value) {
  return typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
}

// ------------------------------------------------------------------------------------------------
// Framing: [u32 big-endian envelope length n][n bytes Envelope][attachment]

/**
 * One binary WebSocket message. `attachment` is the payload of a MEDIA_FRAME, nothing otherwise;
 * `writeAttachment(target)` may fill it in place instead (an encoder's chunk copies itself there).
 */
export function frameMessage(envelopeBytes, attachment = null, attachmentSize = 0, writeAttachment = null) {
  const size = attachment ? attachment.byteLength : attachmentSize;
  const message = new Uint8Array(4 + envelopeBytes.byteLength + size);
  new DataView(message.buffer).setUint32(0, envelopeBytes.byteLength);
  message.set(envelopeBytes, 4);
  const tail = message.subarray(4 + envelopeBytes.byteLength);
  if (attachment) tail.set(attachment);
  else if (writeAttachment) writeAttachment(tail);
  return message;
}

/** Splits a received message into its envelope and attachment; throws MALFORMED_MESSAGE. */
export function unframeMessage(buffer) {
  if (buffer.byteLength < 5) throw new ShowroomError('MALFORMED_MESSAGE', `a ${buffer.byteLength}-byte message is too short for a frame`);
  const length = new DataView(buffer).getUint32(0);
  if (length < 1 || 4 + length > buffer.byteLength) {
    throw new ShowroomError('MALFORMED_MESSAGE', `an envelope length of ${length} does not fit a ${buffer.byteLength}-byte message`);
  }
  const envelope = decodeMessage(showroom.wire.Envelope, new Uint8Array(buffer, 4, length), 'envelope');
  return { envelope, attachment: new Uint8Array(buffer, 4 + length) };
}

// ------------------------------------------------------------------------------------------------
// Events

/** A small event emitter: a listener that throws is reported on the console and never breaks the SDK. */
export class Emitter {
  #listeners = new Map();

  /** Calls `fn` on every `event`. */
  on(event, fn) {
    if (typeof fn !== 'function') throw new TypeError('a listener must be a function');
    if (!this.#listeners.has(event)) this.#listeners.set(event, []);
    this.#listeners.get(event).push({ fn, once: false });
    return this;
  }

  /** Calls `fn` on the next `event` only. */
  once(event, fn) {
    this.on(event, fn);
    this.#listeners.get(event).at(-1).once = true;
    return this;
  }

  /** Removes `fn` from `event`, or every listener of `event` without `fn`. */
  off(event, fn) {
    const list = this.#listeners.get(event);
    if (!list) return this;
    if (!fn) this.#listeners.delete(event);
    else this.#listeners.set(event, list.filter((entry) => entry.fn !== fn));
    return this;
  }

  /** Removes every listener (of `event`, or of all events). */
  removeAllListeners(event) {
    if (event === undefined) this.#listeners.clear();
    else this.#listeners.delete(event);
    return this;
  }

  /** Number of listeners of `event`. */
  listenerCount(event) {
    return this.#listeners.get(event)?.length ?? 0;
  }

  emit(event, ...args) {
    const list = this.#listeners.get(event);
    if (!list || list.length === 0) return false;
    for (const entry of [...list]) {
      if (entry.once) this.off(event, entry.fn);
      try {
        entry.fn(...args);
      } catch (error) {
        console.error(`showroom: a '${event}' listener threw`, error);
      }
    }
    return true;
  }
}

// ------------------------------------------------------------------------------------------------
// Log

let logLevel = 2;

/** 0 debug, 1 info, 2 warning, 3 error, 4 none. */
export function setLogLevel(level) {
  logLevel = Math.max(0, Math.min(4, Number(level) | 0));
}

export const log = {
  debug: (...args) => logLevel <= 0 && console.debug('showroom:', ...args),
  info: (...args) => logLevel <= 1 && console.info('showroom:', ...args),
  warn: (...args) => logLevel <= 2 && console.warn('showroom:', ...args),
  error: (...args) => logLevel <= 3 && console.error('showroom:', ...args),
};

// ------------------------------------------------------------------------------------------------
// A WebSocket carrying envelopes

/** The most requests waiting for answers on one link. */
const MAX_PENDING = 1024;

/**
 * One WebSocket to a Showroom process (an edge's /v1/edge or a coordinator's or call-signal
 * node's /v1/node): requests with their answers, one-way messages both ways.
 */
export class WsLink {
  /**
   * @param {string} url
   * @param {{maxInboundBytes?: number, onMessage?: Function, onClose?: Function, onError?: Function}} options
   *   `onMessage(envelope, attachment)` gets everything that answers no request; `onError(error)`
   *   what could not be read.
   */
  constructor(url, options = {}) {
    this.url = url;
    this.maxInboundBytes = options.maxInboundBytes ?? 8 << 20;
    this.onMessage = options.onMessage ?? (() => {});
    this.onClose = options.onClose ?? (() => {});
    this.onError = options.onError ?? ((error) => log.warn(url, error.message));
    this.closed = false;
    this.bytesSent = 0;
    this.bytesReceived = 0;
    this.lastHeard = performance.now();
    this.#nextId = 1;
    this.#pending = new Map();
  }

  #socket = null;
  #nextId;
  #pending;
  #opening = null;

  /** Opens the socket; rejects with UNAVAILABLE when it cannot, DEADLINE_EXCEEDED after `timeoutMs`. */
  open(timeoutMs = 5000) {
    if (this.#opening) return this.#opening;
    this.#opening = new Promise((resolve, reject) => {
      let socket;
      try {
        socket = new WebSocket(this.url);
      } catch (error) {
        this.closed = true;
        reject(new ShowroomError('INVALID_ARGUMENT', `cannot open a WebSocket to ${this.url}: ${error.message}`));
        return;
      }
      socket.binaryType = 'arraybuffer';
      this.#socket = socket;
      const timer = setTimeout(() => {
        reject(new ShowroomError('DEADLINE_EXCEEDED', `${this.url} did not accept a WebSocket within ${timeoutMs} ms`));
        this.close();
      }, timeoutMs);
      socket.onopen = () => {
        clearTimeout(timer);
        this.lastHeard = performance.now();
        resolve(this);
      };
      socket.onmessage = (event) => this.#received(event.data);
      socket.onerror = () => {};
      socket.onclose = (event) => {
        clearTimeout(timer);
        const error = new ShowroomError('UNAVAILABLE', `the WebSocket to ${this.url} closed (${event.code}${event.reason ? ' ' + event.reason : ''})`);
        reject(error);
        this.#closed(error);
      };
    });
    return this.#opening;
  }

  /** Whether the socket is open. */
  get isOpen() {
    return !this.closed && this.#socket?.readyState === WebSocket.OPEN;
  }

  /** Bytes queued in the socket and not yet sent (what a slow network holds back). */
  get bufferedAmount() {
    return this.#socket?.bufferedAmount ?? 0;
  }

  /**
   * Sends a request and waits for its answer's body, decoded as `responseType`. A failed answer
   * rejects with its error; no answer within `timeoutMs` with DEADLINE_EXCEEDED.
   */
  request(kind, requestType, body, responseType, { timeoutMs = 3000 } = {}) {
    if (!this.isOpen) return Promise.reject(new ShowroomError('UNAVAILABLE', `the WebSocket to ${this.url} is not open`));
    if (this.#pending.size >= MAX_PENDING) {
      return Promise.reject(new ShowroomError('UNAVAILABLE', `${MAX_PENDING} requests wait for ${this.url} already`));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new ShowroomError('DEADLINE_EXCEEDED', `${Kind[kind] ?? kind} to ${this.url} not answered within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { kind, responseType, resolve, reject, timer });
      try {
        this.#sendEnvelope(kind, id, encodeMessage(requestType, body), timeoutMs);
      } catch (error) {
        clearTimeout(timer);
        this.#pending.delete(id);
        reject(asShowroomError(error, 'INVALID_ARGUMENT'));
      }
    });
  }

  /** Sends a one-way message (request id 0); false when the socket is not open. */
  send(kind, requestType, body) {
    if (!this.isOpen) return false;
    this.#sendEnvelope(kind, 0, encodeMessage(requestType, body), 0);
    return true;
  }

  /** Sends an already framed message; false when the socket is not open. */
  sendFramed(message) {
    if (!this.isOpen) return false;
    this.#socket.send(message);
    this.bytesSent += message.byteLength;
    return true;
  }

  /** Closes the socket; waiting requests fail with UNAVAILABLE. */
  close(reason = 'closed by the client') {
    if (this.#socket && this.#socket.readyState <= WebSocket.OPEN) {
      try {
        this.#socket.close(1000, reason.slice(0, 100));
      } catch {
        // Closing twice is harmless.
      }
    }
    this.#closed(new ShowroomError('UNAVAILABLE', `the WebSocket to ${this.url} was ${reason}`));
  }

  #sendEnvelope(kind, id, body, deadlineMs) {
    const envelope = encodeMessage(showroom.wire.Envelope, {
      kind,
      requestId: BigInt(id),
      body,
      deadlineMs,
      protocolVersion: showroom.wire.ProtocolVersion.PROTOCOL_VERSION_CURRENT,
    });
    this.sendFramed(frameMessage(envelope));
  }

  #received(data) {
    if (this.closed) return;
    this.lastHeard = performance.now();
    if (typeof data === 'string') {
      this.onError(new ShowroomError('MALFORMED_MESSAGE', `${this.url} sent a text message; only binary frames carry envelopes`));
      return;
    }
    this.bytesReceived += data.byteLength;
    if (data.byteLength > this.maxInboundBytes) {
      this.onError(new ShowroomError('TOO_LARGE', `${this.url} sent a ${data.byteLength}-byte message, over the ${this.maxInboundBytes} bytes read`));
      return;
    }
    let envelope, attachment;
    try {
      ({ envelope, attachment } = unframeMessage(data));
    } catch (error) {
      this.onError(asShowroomError(error, 'MALFORMED_MESSAGE'));
      return;
    }
    const id = num(envelope.requestId);
    const waiting = envelope.isResponse && id > 0 ? this.#pending.get(id) : undefined;
    if (waiting) {
      this.#pending.delete(id);
      clearTimeout(waiting.timer);
      if (envelope.kind !== waiting.kind) {
        waiting.reject(new ShowroomError('MALFORMED_MESSAGE', `${this.url} answered ${Kind[waiting.kind] ?? waiting.kind} with kind ${envelope.kind}`));
      } else if (envelope.error && Number(envelope.error.code) !== 0) {
        waiting.reject(ShowroomError.fromWire(envelope.error));
      } else {
        try {
          waiting.resolve(decodeMessage(waiting.responseType, envelope.body, 'response'));
        } catch (error) {
          waiting.reject(error);
        }
      }
      return;
    }
    if (envelope.isResponse && id > 0) return; // the answer to a request that timed out
    try {
      this.onMessage(envelope, attachment);
    } catch (error) {
      this.onError(asShowroomError(error, 'MALFORMED_MESSAGE'));
    }
  }

  #closed(error) {
    if (this.closed) return;
    this.closed = true;
    for (const waiting of this.#pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.#pending.clear();
    try {
      this.onClose(error);
    } catch (thrown) {
      log.error('a close handler threw', thrown);
    }
  }
}

// ------------------------------------------------------------------------------------------------
// The cluster: coordinators and call-signal nodes by their WebSocket faces

let defaultServers = [];

/** Sets the coordinators' (or any members') `ws://…/v1/node` addresses used when no `servers` option is given. */
export function setDefaultServers(urls) {
  defaultServers = normalizeServers(urls);
}

/** The addresses set with setDefaultServers. */
export function getDefaultServers() {
  return [...defaultServers];
}

function normalizeServers(urls) {
  const list = (Array.isArray(urls) ? urls : [urls]).filter((url) => typeof url === 'string' && url.length > 0);
  for (const url of list) {
    if (!/^wss?:\/\//.test(url)) throw new ShowroomError('INVALID_ARGUMENT', `a server address is a ws:// or wss:// URL, got '${url}'`);
  }
  return [...new Set(list)];
}

const clusters = new Map();

/**
 * The members of one cluster as the first seed that answers sees them, with a WebSocket link to
 * each when asked. Shared by every client and service given the same seeds.
 */
export class Cluster {
  /** The cluster reached through `servers` (the default servers when none). */
  static for(servers) {
    const seeds = servers && servers.length ? normalizeServers(servers) : getDefaultServers();
    if (seeds.length === 0) {
      throw new ShowroomError('INVALID_ARGUMENT', 'no server address: call ShowroomRTC.setServers([\'ws://HOST:PORT/v1/node\']) or pass the servers option');
    }
    const key = seeds.join(' ');
    if (!clusters.has(key)) clusters.set(key, new Cluster(seeds));
    return clusters.get(key);
  }

  constructor(seeds) {
    this.seeds = seeds;
    this.#links = new Map();
    this.#status = null;
    this.#statusAt = -Infinity;
    this.#statusPromise = null;
  }

  #links;
  #status;
  #statusAt;
  #statusPromise;

  /** How long a cluster status is reused. */
  static statusCacheMs = 2000;

  /** The link to `url`, opened (a closed one is replaced). */
  async link(url, timeoutMs = 3000) {
    let link = this.#links.get(url);
    if (!link || link.closed) {
      link = new WsLink(url, { maxInboundBytes: 4 << 20 });
      link.listeners = new Set();
      link.onMessage = (envelope) => {
        for (const listener of link.listeners) listener(envelope, link);
      };
      link.closeListeners = new Set();
      link.onClose = (error) => {
        for (const listener of link.closeListeners) listener(error, link);
      };
      this.#links.set(url, link);
    }
    await link.open(timeoutMs);
    return link;
  }

  /** The members, cached for statusCacheMs: `[{id, role, state, url}]` with `url` their WebSocket face. */
  async members({ fresh = false } = {}) {
    if (!fresh && this.#status && performance.now() - this.#statusAt < Cluster.statusCacheMs) return this.#status;
    if (!this.#statusPromise) {
      this.#statusPromise = this.#fetchStatus().finally(() => {
        this.#statusPromise = null;
      });
    }
    return this.#statusPromise;
  }

  async #fetchStatus() {
    // Known members first (the seeds may be gone), then the seeds.
    const known = (this.#status ?? []).filter((member) => member.url && member.role !== 'edge').map((member) => member.url);
    const candidates = [...new Set([...known, ...this.seeds])];
    let lastError = null;
    for (const url of candidates) {
      try {
        const link = await this.link(url);
        const status = await link.request(Kind.CLUSTER_STATUS, showroom.admin.ClusterStatusRequest, {}, showroom.admin.ClusterStatus);
        const members = (status.members ?? []).slice(0, 4096).map((member) => ({
          id: String(member.id ?? ''),
          role: String(member.role ?? ''),
          alive: member.state === showroom.membership.MemberState.MEMBER_STATE_ALIVE,
          url: String(member.webSocketEndpoint ?? ''),
        }));
        this.#status = members;
        this.#statusAt = performance.now();
        return members;
      } catch (error) {
        lastError = asShowroomError(error, 'UNAVAILABLE');
      }
    }
    throw new ShowroomError('UNAVAILABLE', `no server answered (asked ${candidates.join(', ')}): ${lastError?.message ?? 'no address'}`);
  }

  /** The alive members of `role` ('coordinator', 'callsignal', 'edge') with a WebSocket face, by id. */
  async membersOf(role, options) {
    const members = await this.members(options);
    return members.filter((member) => member.role === role && member.alive && member.url).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /**
   * Sends a request to a member of `role`: the one `key` picks first (spreading the load), the
   * next on an answer that says to retry elsewhere. A cluster that lists none of that role is
   * asked through the seeds themselves (a seed that serves the kind answers).
   */
  async request(role, kind, requestType, body, responseType, { key = '', timeoutMs = 3000 } = {}) {
    let members = [];
    try {
      members = await this.membersOf(role);
    } catch (error) {
      if (!this.seeds.length) throw error;
    }
    let urls = members.map((member) => member.url);
    if (urls.length === 0) urls = [...this.seeds];
    if (key && urls.length > 1) {
      const start = hashString(key) % urls.length;
      urls = [...urls.slice(start), ...urls.slice(0, start)];
    }
    let lastError = null;
    for (const url of urls) {
      let link;
      try {
        link = await this.link(url);
      } catch (error) {
        lastError = asShowroomError(error, 'UNAVAILABLE');
        this.#statusAt = -Infinity; // a member that cannot be reached: ask the cluster again next time
        continue;
      }
      try {
        return await link.request(kind, requestType, body, responseType, { timeoutMs });
      } catch (error) {
        lastError = asShowroomError(error, 'UNAVAILABLE');
        if (!lastError.isTransient) throw lastError;
      }
    }
    throw lastError ?? new ShowroomError('UNAVAILABLE', `no ${role} to ask`);
  }
}

/** FNV-1a over UTF-16 code units: a stable spread of keys over members. */
export function hashString(text) {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** A random id for logs and client ids. */
export function randomId(length = 12) {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (byte) => (byte % 36).toString(36)).join('');
}

/** Waits `ms`. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
