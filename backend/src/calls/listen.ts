// Listening in (docs/design.md §16): `GET /api/v1/calls/{id}/listen` upgraded to a WebSocket streams both sides
// of a call in progress as binary messages, each one byte naming the side (LISTEN_SIDE: 0 caller, 1 bot) and a
// 20 ms frame of 16-bit little-endian mono PCM at the worker's rate (16 kHz). The worker running the call publishes
// frames only while someone listens: each listening backend renews a `listen` request on the call's control
// channel, and the worker stops by itself a while after the last one. Rights as for controls.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Redis } from 'ioredis';
import { WebSocket, WebSocketServer } from 'ws';
import { AccessToken } from 'livekit-server-sdk';
import { callControlChannel, callListenChannel, LISTEN_END, LISTEN_RENEW_MS, LISTEN_TOKEN_TTL_SECONDS, type CallListenRequest, type CallListenToken } from '@voice-platform/schemas';
import { randomUUID } from 'node:crypto';
import { authenticateAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { recordAudit } from '../audit/audit.js';
import type { Services } from '../core/deps.js';
import { apiError } from '../core/errors.js';
import type { Metrics } from '../core/metrics.js';
import { findCall } from './store.js';

/** An HTTP upgrade request as server.ts hands it to the app: the socket and the bytes read past the headers. */
export interface UpgradeRequest extends IncomingMessage {
  upgrade?: { socket: Duplex; head: Buffer };
}

/** The listeners of this backend by call, on one subscriber connection. */
class ListenHub {
  private sub: Redis | null = null;
  private readonly calls = new Map<string, { sockets: Set<WebSocket>; renew: NodeJS.Timeout }>();

  constructor(private readonly svc: Services) {}

  /** Asks the worker running `id` for its audio; false when none runs it (nobody subscribed to its controls). */
  async request(id: string): Promise<boolean> {
    const req: CallListenRequest = { type: 'listen', until: this.svc.clock() + LISTEN_RENEW_MS };
    return (await this.svc.redis.publish(callControlChannel(id), JSON.stringify(req))) > 0;
  }

  async add(id: string, ws: WebSocket): Promise<void> {
    let entry = this.calls.get(id);
    if (!entry) {
      const renew = setInterval(() => {
        void this.request(id).then(
          (running) => running || this.closeAll(id, 1000, 'the call is over'),
          () => undefined, // Redis away for a moment: the next renewal (or the worker's own time-out) decides
        );
      }, LISTEN_RENEW_MS / 3);
      renew.unref();
      entry = { sockets: new Set(), renew };
      this.calls.set(id, entry);
      await this.subscriber().subscribe(callListenChannel(id));
    }
    entry.sockets.add(ws);
    ws.on('close', () => this.remove(id, ws));
  }

  private remove(id: string, ws: WebSocket): void {
    const entry = this.calls.get(id);
    if (!entry) return;
    entry.sockets.delete(ws);
    if (entry.sockets.size) return;
    clearInterval(entry.renew);
    this.calls.delete(id);
    void this.sub?.unsubscribe(callListenChannel(id)).catch(() => undefined);
  }

  private closeAll(id: string, code: number, reason: string): void {
    for (const ws of this.calls.get(id)?.sockets ?? []) ws.close(code, reason);
  }

  private subscriber(): Redis {
    if (this.sub) return this.sub;
    // Its own connection in subscriber mode; unlike the command client it queues a SUBSCRIBE until it is connected.
    const sub = this.svc.redis.duplicate({ lazyConnect: false, enableOfflineQueue: true });
    sub.on('error', () => undefined); // it reconnects by itself; frames meanwhile are lost (a gap in what is heard)
    sub.on('messageBuffer', (channel: Buffer, frame: Buffer) => {
      const id = /^vp:call:(.+):listen$/.exec(channel.toString())?.[1];
      if (!id) return;
      if (frame.length === 1 && frame[0] === LISTEN_END) return this.closeAll(id, 1000, 'the call is over');
      for (const ws of this.calls.get(id)?.sockets ?? []) if (ws.readyState === WebSocket.OPEN && ws.bufferedAmount < 1 << 20) ws.send(frame);
    });
    this.sub = sub;
    return sub;
  }
}

export function listenRoutes(router: Router, svc: Services, metrics: Metrics): void {
  // The console's Listen: a hidden, subscribe-only participant in the call's LiveKit room (both sides heard).
  router.post('/api/v1/calls/:id/listen-token', async (ctx: Context) => {
    ctx.state.admin = await authenticateAdmin(svc, ctx);
    const s = svc.settings;
    const id = ctx.params.id!;
    const doc = await findCall(svc.db, id, { _id: 1, status: 1, direction: 1, room_name: 1 });
    if (!doc) throw apiError('call_not_found');
    if (doc.status !== 'in_progress') throw apiError('call_not_active', { details: { status: doc.status } });
    if (doc.direction === 'websocket') throw apiError('call_not_active', { message: 'a WebSocket call has no LiveKit room: listen with GET /api/v1/calls/{id}/listen', details: { status: doc.status } });
    if (!s.LIVEKIT_URL || !s.LIVEKIT_API_KEY || !s.LIVEKIT_API_SECRET) throw apiError('service_unavailable', 'listening needs the telephony plane (LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET)');
    const room = doc.room_name ?? doc._id;
    const at = new AccessToken(s.LIVEKIT_API_KEY, s.LIVEKIT_API_SECRET, { identity: `listener-${randomUUID()}`, name: `listening: ${ctx.state.admin.email}`, ttl: LISTEN_TOKEN_TTL_SECONDS });
    at.addGrant({ room, roomJoin: true, canSubscribe: true, canPublish: false, canPublishData: false, hidden: true });
    await recordAudit(svc, ctx, { action: 'call.listen', resource: { type: 'call', id } });
    const body: CallListenToken = {
      call_id: id,
      room_name: room,
      livekit_url: s.LIVEKIT_PUBLIC_URL ?? s.LIVEKIT_URL,
      access_token: await at.toJwt(),
      expires_at: new Date(svc.clock() + LISTEN_TOKEN_TTL_SECONDS * 1000).toISOString(),
    };
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  });

  const hub = new ListenHub(svc);
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  router.get('/api/v1/calls/:id/listen', async (ctx: Context) => {
    if (ctx.headers.authorization !== undefined && ctx.headers['x-api-key'] === undefined) ctx.state.admin = await authenticateAdmin(svc, ctx);
    else ctx.state.apiKey = await authenticateKey(svc, metrics, ctx);
    const id = ctx.params.id!;
    const doc = await findCall(svc.db, id, { _id: 1, status: 1, api_key_id: 1 });
    if (!doc || (ctx.state.apiKey && doc.api_key_id !== ctx.state.apiKey.id)) throw apiError('call_not_found');
    const upgrade = (ctx.req as UpgradeRequest).upgrade;
    if (!upgrade || ctx.get('upgrade').toLowerCase() !== 'websocket') throw apiError('bad_request', 'connect with a WebSocket (Upgrade: websocket) to listen');
    if (doc.status !== 'in_progress' || !(await hub.request(id))) throw apiError('call_not_active', { details: { status: doc.status } });
    await recordAudit(svc, ctx, { action: 'call.listen', resource: { type: 'call', id } });
    ctx.respond = false;
    wss.handleUpgrade(ctx.req, upgrade.socket, upgrade.head, (ws) => {
      ws.on('message', () => ws.close(1008, 'listeners do not send'));
      void hub.add(id, ws).catch(() => ws.close(1011, 'cannot listen now'));
    });
  });
}
