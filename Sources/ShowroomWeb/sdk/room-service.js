// The room service (the show scene's service layer, as Sources/ShowroomKit/RoomService*.swift):
// rooms, audience, chat, PK and co-host requests to the cluster's coordinators, and room events
// from their ROOM_NOTICEs. Notices are published only by the coordinator that owns a room, so the
// service keeps a WebSocket to every coordinator and subscribes to the rooms' topics on each.

import { Cluster, Emitter, Kind, ShowroomError, asShowroomError, decodeMessage, enumName, log, showroom } from './wire.js';

const room = showroom.room;

/** How often the coordinators are listed again, to subscribe on new ones. */
const COORDINATOR_REFRESH_MS = 5000;
/** The most rooms one service follows (EVENTS_SUBSCRIBE takes at most 64 topics). */
const MAX_SUBSCRIBED_ROOMS = 64;
/** Chat messages remembered per room to drop a notice published twice (around a failover). */
const SEEN_CHAT_LIMIT = 512;

/** A decoded value with every 64-bit integer as a Number (each is a time or count below 2^53). */
function plain(value) {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [key, field] of Object.entries(value)) out[key] = plain(field);
    return out;
  }
  return value;
}

function interactionOf(interaction) {
  if (!interaction) return { kind: 'IDLE', id: '', seats: [] };
  return {
    ...plain(interaction),
    kind: enumName(room.RoomInteractionKind, interaction.kind, 'ROOM_INTERACTION_KIND_'),
    mediaMode: enumName(room.PkMediaMode, interaction.mediaMode, 'PK_MEDIA_MODE_'),
  };
}

function requestOf(request) {
  if (!request) return null;
  return {
    ...plain(request),
    kind: enumName(room.RoomRequestKind, request.kind, 'ROOM_REQUEST_KIND_'),
    mediaMode: enumName(room.PkMediaMode, request.mediaMode, 'PK_MEDIA_MODE_'),
  };
}

/** A room as the app sees it: the fields of showroom.room.Room, enums by name, times as Numbers. */
export function roomOf(wire) {
  if (!wire) return null;
  return {
    ...plain(wire),
    state: enumName(room.RoomState, wire.state, 'ROOM_STATE_'),
    closeReason: enumName(room.RoomCloseReason, wire.closeReason, 'ROOM_CLOSE_REASON_'),
    interaction: interactionOf(wire.interaction),
    pkIntent: wire.pkIntent ? interactionOf(wire.pkIntent) : null,
    pending: (wire.pending ?? []).map(requestOf),
  };
}

function mediaModeOf(mode) {
  if (mode === undefined || mode === 'forward') return room.PkMediaMode.PK_MEDIA_MODE_FORWARD;
  if (mode === 'subscribe') return room.PkMediaMode.PK_MEDIA_MODE_SUBSCRIBE;
  throw new ShowroomError('INVALID_ARGUMENT', `a PK media mode is 'forward' or 'subscribe', got '${mode}'`);
}

/**
 * Rooms, chat, PK and co-host on a Showroom cluster.
 *
 * ```js
 * const rooms = new RoomService({ servers: ['ws://127.0.0.1:7100/v1/node'] });
 * const { rooms: page } = await rooms.listRooms();
 * rooms.on('message', (message) => show(message));
 * await rooms.subscribe(page[0].roomId);
 * ```
 */
export class RoomService extends Emitter {
  /**
   * @param {{servers?: string[], tokenProvider?: (channel: string, uid: number, role: string) => Promise<string>, timeoutMs?: number}} [options]
   */
  constructor(options = {}) {
    super();
    this._cluster = Cluster.for(options.servers);
    this._tokenProvider = options.tokenProvider ?? null;
    this._timeoutMs = options.timeoutMs ?? 3000;
    /** roomId → the room as last seen (for its channel and version) */
    this._rooms = new Map();
    this._subscribed = new Set();
    this._versions = new Map();
    this._seenChat = new Map();
    this._links = new Map();
    this._refreshTimer = null;
    this._closed = false;
  }

  async _request(kind, requestType, body, responseType, key) {
    if (this._closed) throw new ShowroomError('UNAVAILABLE', 'the room service is closed');
    return this._cluster.request('coordinator', kind, requestType, body, responseType, { key, timeoutMs: this._timeoutMs });
  }

  _keep(wire) {
    const value = roomOf(wire);
    if (value?.roomId) {
      this._rooms.set(value.roomId, value);
      if (this._rooms.size > 1000) this._rooms.delete(this._rooms.keys().next().value);
    }
    return value;
  }

  // ----------------------------------------------------------------------------------------------
  // Rooms

  /** Creates a room (the owner's live show). */
  async createRoom({ name, ownerUid, ownerName = '', ownerAvatar = '', roomId = '', channel = '', seats = 0 } = {}) {
    const answer = await this._request(Kind.ROOM_CREATE, room.CreateRoomRequest,
      { roomId, name: String(name ?? ''), ownerUid, ownerName, ownerAvatar, channel, seats }, room.CreateRoomResponse, roomId);
    return this._keep(answer.room);
  }

  /** Open rooms, newest first, a page at a time. */
  async listRooms({ pageSize = 20, pageToken = '' } = {}) {
    const answer = await this._request(Kind.ROOM_LIST, room.ListRoomsRequest,
      { pageSize: Math.max(1, Math.min(100, pageSize | 0)), pageToken }, room.ListRoomsResponse, '');
    return { rooms: answer.rooms.map((wire) => this._keep(wire)), nextPageToken: answer.nextPageToken, total: answer.total };
  }

  /** A room (closed rooms too, until purged). */
  async getRoom(roomId) {
    const answer = await this._request(Kind.ROOM_GET, room.GetRoomRequest, { roomId }, room.GetRoomResponse, roomId);
    return this._keep(answer.room);
  }

  /** A new name and/or metadata, by the owner. */
  async updateRoom(roomId, uid, { name, metadata } = {}) {
    const answer = await this._request(Kind.ROOM_UPDATE, room.UpdateRoomRequest, { roomId, uid, name, metadata }, room.UpdateRoomResponse, roomId);
    return this._keep(answer.room);
  }

  /** An audience member enters the room (counted in its audience). */
  async joinRoom(roomId, uid, userName = '') {
    const answer = await this._request(Kind.ROOM_JOIN, room.JoinRoomRequest, { roomId, uid, userName }, room.JoinRoomResponse, roomId);
    return this._keep(answer.room);
  }

  /** An audience member leaves the room. */
  async leaveRoom(roomId, uid) {
    const answer = await this._request(Kind.ROOM_LEAVE, room.LeaveRoomRequest, { roomId, uid }, room.LeaveRoomResponse, roomId);
    return this._keep(answer.room);
  }

  /** The owner closes the room. */
  async closeRoom(roomId, uid) {
    const answer = await this._request(Kind.ROOM_CLOSE, room.CloseRoomRequest, { roomId, uid }, room.CloseRoomResponse, roomId);
    return this._keep(answer.room);
  }

  /** Sends a chat message (at most 1024 bytes of UTF-8). */
  async sendMessage(roomId, uid, text, userName = '') {
    const answer = await this._request(Kind.ROOM_CHAT_SEND, room.SendChatRequest, { roomId, uid, userName, text: String(text) },
      room.SendChatResponse, roomId);
    return plain(answer.message);
  }

  /** The most recent chat messages, oldest first. */
  async messages(roomId, { limit = 50, after = 0 } = {}) {
    const answer = await this._request(Kind.ROOM_CHAT_HISTORY, room.ChatHistoryRequest,
      { roomId, limit: Math.max(1, Math.min(100, limit | 0)), afterSequence: BigInt(after) }, room.ChatHistoryResponse, roomId);
    return answer.messages.map(plain);
  }

  // ----------------------------------------------------------------------------------------------
  // PK and co-host: every request carries the acting user's token for the room's channel.

  async _token(roomId, uid, token) {
    if (token) return token;
    if (!this._tokenProvider) throw new ShowroomError('INVALID_ARGUMENT', 'a token is needed (or a tokenProvider given to the room service)');
    const channel = this._rooms.get(roomId)?.channel ?? (await this.getRoom(roomId)).channel;
    return this._tokenProvider(channel, uid, 'publisher');
  }

  async _interaction(kind, requestType, roomId, uid, token, fields) {
    const body = { roomId, uid, token: await this._token(roomId, uid, token), ...fields };
    const answer = await this._request(kind, requestType, body, room.InteractionResponse, roomId);
    return { room: this._keep(answer.room), request: requestOf(answer.request) };
  }

  /** The owner of `roomId` invites the owner of `peerRoomId` to a PK. Resolves with the invitation. */
  async invitePK({ roomId, uid, token, peerRoomId, durationSeconds = 0, mediaMode } = {}) {
    const answer = await this._interaction(Kind.ROOM_PK_INVITE, room.PkInviteRequest, roomId, uid, token,
      { peerRoomId, durationS: durationSeconds, mediaMode: mediaModeOf(mediaMode) });
    return answer.request ?? answer.room;
  }

  /** The invited owner accepts. */
  async acceptPK({ roomId, uid, token, invitationId } = {}) {
    return (await this._interaction(Kind.ROOM_PK_ANSWER, room.PkAnswerRequest, roomId, uid, token, { invitationId, accept: true })).room;
  }

  /** The invited owner rejects. */
  async rejectPK({ roomId, uid, token, invitationId } = {}) {
    return (await this._interaction(Kind.ROOM_PK_ANSWER, room.PkAnswerRequest, roomId, uid, token, { invitationId, accept: false })).room;
  }

  /** The inviting owner withdraws its invitation. */
  async cancelPKInvitation({ roomId, uid, token, invitationId } = {}) {
    return (await this._interaction(Kind.ROOM_PK_ANSWER, room.PkAnswerRequest, roomId, uid, token, { invitationId, cancel: true })).room;
  }

  /** Either owner ends the PK it names. */
  async stopPK({ roomId, uid, token, pkId } = {}) {
    return (await this._interaction(Kind.ROOM_PK_STOP, room.PkStopRequest, roomId, uid, token, { pkId })).room;
  }

  /** The owner waits to be paired with another waiting room. */
  async matchPK({ roomId, uid, token, durationSeconds = 0 } = {}) {
    return (await this._interaction(Kind.ROOM_PK_MATCH, room.PkMatchRequest, roomId, uid, token, { durationS: durationSeconds })).room;
  }

  /** The owner stops waiting for a match. */
  async cancelPKMatch({ roomId, uid, token } = {}) {
    return (await this._interaction(Kind.ROOM_PK_MATCH, room.PkMatchRequest, roomId, uid, token, { cancel: true })).room;
  }

  /** An audience member asks for a co-host seat. Resolves with the application. */
  async applyForCoHosting({ roomId, uid, token, userName = '' } = {}) {
    const answer = await this._interaction(Kind.ROOM_COHOST_APPLY, room.CoHostApplyRequest, roomId, uid, token, { userName });
    return answer.request ?? answer.room;
  }

  /** The audience member withdraws its application. */
  async cancelCoHostApplication({ roomId, uid, token } = {}) {
    return (await this._interaction(Kind.ROOM_COHOST_APPLY, room.CoHostApplyRequest, roomId, uid, token, { cancel: true })).room;
  }

  /** The owner invites an audience member up. Resolves with the invitation. */
  async inviteCoHost({ roomId, uid, token, inviteeUid } = {}) {
    const answer = await this._interaction(Kind.ROOM_COHOST_INVITE, room.CoHostInviteRequest, roomId, uid, token, { inviteeUid });
    return answer.request ?? answer.room;
  }

  /** The owner withdraws an invitation. */
  async cancelCoHostInvitation({ roomId, uid, token, invitationId } = {}) {
    return (await this._interaction(Kind.ROOM_COHOST_INVITE, room.CoHostInviteRequest, roomId, uid, token,
      { cancel: true, invitationId })).room;
  }

  /** The owner answers an application, or the invited user an invitation. */
  async answerCoHostRequest({ roomId, uid, token, requestId, accept } = {}) {
    return (await this._interaction(Kind.ROOM_COHOST_ANSWER, room.CoHostAnswerRequest, roomId, uid, token,
      { requestId, accept: Boolean(accept) })).room;
  }

  /** The co-host or the owner ends the seat it names. */
  async stopCoHosting({ roomId, uid, token, seatId } = {}) {
    return (await this._interaction(Kind.ROOM_COHOST_STOP, room.CoHostStopRequest, roomId, uid, token, { seatId })).room;
  }

  // ----------------------------------------------------------------------------------------------
  // Events

  /**
   * Follows a room: its events arrive from now on, after a `snapshot` of the room as it is once
   * the subscription is set up (older notices are left out). Resolves with that snapshot.
   */
  async subscribe(roomId) {
    if (typeof roomId !== 'string' || !roomId) throw new ShowroomError('INVALID_ARGUMENT', 'subscribe needs a room id');
    if (!this._subscribed.has(roomId) && this._subscribed.size >= MAX_SUBSCRIBED_ROOMS) {
      throw new ShowroomError('INVALID_ARGUMENT', `a room service follows at most ${MAX_SUBSCRIBED_ROOMS} rooms`);
    }
    this._subscribed.add(roomId);
    // Subscribed first, read second: nothing published in between is missed.
    await this._syncSubscriptions();
    this._scheduleRefresh();
    const snapshot = await this.getRoom(roomId);
    this._versions.set(roomId, Math.max(this._versions.get(roomId) ?? 0, snapshot.version));
    this.emit('snapshot', snapshot);
    return snapshot;
  }

  /** Stops following a room. */
  async unsubscribe(roomId) {
    if (!this._subscribed.delete(roomId)) return;
    this._versions.delete(roomId);
    this._seenChat.delete(roomId);
    await this._syncSubscriptions();
  }

  /** Closes the service: its event links are dropped and no event follows. */
  close() {
    this._closed = true;
    clearTimeout(this._refreshTimer);
    for (const link of this._links.values()) {
      link.listeners.delete(this._onNotice);
      link.closeListeners.delete(this._onLinkClosed);
    }
    this._links.clear();
    this._subscribed.clear();
    this.removeAllListeners();
  }

  _scheduleRefresh() {
    clearTimeout(this._refreshTimer);
    if (this._closed || this._subscribed.size === 0) return;
    this._refreshTimer = setTimeout(() => {
      this._syncSubscriptions().catch((error) => log.debug('room events refresh failed', error.message)).finally(() => this._scheduleRefresh());
    }, COORDINATOR_REFRESH_MS);
  }

  /** Sends the topic set to every coordinator (new ones included). */
  async _syncSubscriptions() {
    if (this._closed) return;
    const coordinators = await this._cluster.membersOf('coordinator').catch(() => []);
    const urls = coordinators.length ? coordinators.map((member) => member.url) : this._cluster.seeds;
    const topics = [...this._subscribed].map((id) => `room/${id}`);
    let reached = 0;
    let lastError = null;
    await Promise.all(urls.map(async (url) => {
      try {
        const link = await this._cluster.link(url);
        if (!link.listeners.has(this._onNotice)) {
          link.listeners.add(this._onNotice);
          link.closeListeners.add(this._onLinkClosed);
        }
        this._links.set(url, link);
        await link.request(Kind.EVENTS_SUBSCRIBE, room.SubscribeEventsRequest, { topics }, room.SubscribeEventsResponse,
          { timeoutMs: this._timeoutMs });
        reached++;
      } catch (error) {
        lastError = asShowroomError(error, 'UNAVAILABLE');
      }
    }));
    if (reached === 0 && lastError && topics.length) throw lastError;
  }

  _onLinkClosed = (error, link) => {
    if (this._closed) return;
    this._links.delete(link.url);
    log.debug(`room events from ${link.url} lost: ${error.message}`);
    // Subscribed again on the next refresh (or at once, through a new link).
    setTimeout(() => this._syncSubscriptions().catch(() => {}), 500);
  };

  _onNotice = (envelope) => {
    if (this._closed || envelope.kind !== Kind.ROOM_NOTICE) return;
    let notice;
    try {
      notice = decodeMessage(room.RoomNotice, envelope.body, 'room notice');
    } catch (error) {
      this.emit('error', error);
      return;
    }
    if (!this._subscribed.has(notice.roomId)) return;
    this._deliver(notice);
  };

  _deliver(notice) {
    const roomId = notice.roomId;
    const current = this._keep(notice.room);
    const kind = enumName(room.RoomNoticeKind, notice.kind, 'ROOM_NOTICE_KIND_');
    if (kind === 'MESSAGE_ADDED') {
      const message = plain(notice.message);
      if (!message) return;
      const seen = this._seenChat.get(roomId) ?? new Set();
      if (seen.has(message.sequence)) return;
      seen.add(message.sequence);
      if (seen.size > SEEN_CHAT_LIMIT) seen.delete(seen.values().next().value);
      this._seenChat.set(roomId, seen);
      this.emit('message', message, current);
      return;
    }
    // Room notices are ordered by the room's version: an older (or repeated) one is dropped.
    if (current) {
      const floor = this._versions.get(roomId) ?? 0;
      if (current.version <= floor) return;
      this._versions.set(roomId, current.version);
    }
    switch (kind) {
      case 'USER_COUNT_CHANGED': this.emit('user-count-changed', current); break;
      case 'ROOM_EXPIRED': this.emit('room-closed', current, 'expired'); break;
      case 'ROOM_DESTROYED': this.emit('room-closed', current, 'destroyed'); break;
      case 'INTERACTION_CHANGED': this.emit('interaction-changed', current); break;
      case 'ROOM_UPDATED': this.emit('room-updated', current); break;
      case 'INTERACTION_EVENT': this._interactionEvent(notice.event, current); break;
      default: break;
    }
  }

  _interactionEvent(wire, current) {
    if (!wire) return;
    const event = {
      type: enumName(room.InteractionEventType, wire.type, 'INTERACTION_EVENT_TYPE_'),
      id: wire.id,
      request: requestOf(wire.request),
      interaction: wire.interaction ? interactionOf(wire.interaction) : null,
      reason: enumName(room.InteractionEndReason, wire.reason, 'INTERACTION_END_REASON_'),
      byUid: wire.byUid,
      uid: wire.uid,
    };
    this.emit('interaction', event, current);
    const pk = event.interaction;
    switch (event.type) {
      case 'PK_STARTED':
        this.emit('pk-started', {
          pkId: event.id || pk?.id, roomId: current?.roomId, peerRoomId: pk?.peerRoomId, peerUid: pk?.peerUid,
          peerChannel: pk?.peerChannel, endsAtMs: pk?.endsAtMs ?? 0, mediaMode: (pk?.mediaMode ?? 'FORWARD').toLowerCase(),
        }, current);
        break;
      case 'PK_ENDED':
        this.emit('pk-ended', { pkId: event.id || pk?.id, roomId: current?.roomId, peerRoomId: pk?.peerRoomId, reason: event.reason }, current);
        break;
      case 'COHOST_STARTED': {
        const seat = pk?.seats?.find((candidate) => candidate.uid === event.uid) ?? { uid: event.uid, id: event.id };
        this.emit('cohost-seated', seat, current);
        break;
      }
      case 'COHOST_STOPPED':
        this.emit('cohost-stepped-down', { uid: event.uid, id: event.id }, event.reason, current);
        break;
      default:
        break;
    }
  }
}

export default RoomService;
