// A call's recording, streamed from object storage: GET (and HEAD) /api/v1/calls/{id}/recording, read with
// the rights of GET /api/v1/calls/{id} (an admin token, or the API key that placed the call). One byte range
// (`bytes=a-b`, `a-`, `-n`) → 206 with exactly those bytes; a range past the end → 416; several ranges, or
// a header this server cannot read, are ignored (RFC 9110 §14.2): the whole file, 200.
import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { apiError, type ApiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { Metrics } from '../core/metrics.js';
import { authenticateAdmin } from '../auth/admin.js';
import { authenticateKey } from '../apiKeys/keys.js';
import { StorageUnavailableError } from '../core/storage.js';
import { findCall, type CallDoc } from './store.js';

/**
 * The call as the request's credentials may read it, else 404 `call_not_found`. A CRM reads with its API key
 * (its own calls only); the console with an admin token. Without a bearer token the request is an X-API-Key
 * one (no credentials → missing_api_key). Every credential sent must be valid (a bad key beside a good admin
 * token is refused too); with both valid, the key's narrower view applies.
 */
export async function readableCall(svc: Services, metrics: Metrics, ctx: Context, projection?: Record<string, 0 | 1>): Promise<CallDoc> {
  let apiKeyId: string | undefined;
  const admin = ctx.headers.authorization !== undefined ? await authenticateAdmin(svc, ctx) : null;
  if (!admin || ctx.headers['x-api-key'] !== undefined) apiKeyId = (await authenticateKey(svc, metrics, ctx)).id;
  const doc = await findCall(svc.db, ctx.params.id!, projection && { ...projection, api_key_id: 1 });
  if (!doc || (apiKeyId !== undefined && doc.api_key_id !== apiKeyId)) throw apiError('call_not_found');
  return doc;
}

export type ByteRange = { kind: 'whole' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

const RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * What a `Range` header asks of a file of `size` bytes (RFC 9110 §14.1.2): one range `a-b` (b past the end:
 * to the end), `a-` or the last `n` bytes `-n`. `whole`: no header, another unit, several ranges or one that
 * does not parse (`b` before `a`, `-`), all of which a server ignores; `unsatisfiable`: it starts at or past the
 * end, or asks for the last 0 bytes (or any bytes of an empty file).
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return { kind: 'whole' };
  const m = RANGE.exec(header.trim().replace(/^bytes\s*=\s*/i, 'bytes='));
  if (!m) return { kind: 'whole' };
  const [, a, b] = m as unknown as [string, string, string];
  if (a === '' && b === '') return { kind: 'whole' };
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  if (b !== '' && Number(b) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: b === '' ? size - 1 : Math.min(Number(b), size - 1) };
}

const storageDown = (err: StorageUnavailableError): ApiError =>
  apiError('service_unavailable', { message: `storage is unavailable; retry later (${err.message})`, details: { failed: ['storage'] }, headers: { 'Retry-After': '5' } });

export function recordingRoutes(router: Router, svc: Services, metrics: Metrics): void {
  // koa-router answers HEAD with a GET route: HEAD only asks storage for the object's size.
  router.get('/api/v1/calls/:id/recording', async (ctx) => {
    const call = await readableCall(svc, metrics, ctx, { recording_key: 1 });
    const key = call.recording_key;
    if (!key) throw apiError('recording_not_found');
    const store = svc.recordings;
    if (!store) {
      throw apiError('service_unavailable', { message: 'recordings cannot be read: object storage is not configured (STORAGE_ACCESS_KEY / STORAGE_SECRET_KEY)', details: { failed: ['storage'] }, headers: { 'Retry-After': '60' } });
    }
    const fail = (err: unknown): never => {
      if (err instanceof StorageUnavailableError) {
        ctx.state.errorCause = err.message;
        throw storageDown(err);
      }
      throw err;
    };
    const head = await store.head(key).catch(fail);
    if (!head) throw apiError('recording_not_found', 'the recording is not in object storage');
    const size = head.size;
    // If-Range: the range only holds for the version it names; another version gets the whole file.
    const ifRange = ctx.get('If-Range');
    const range = ifRange && ifRange !== head.etag ? ({ kind: 'whole' } as const) : parseRange(ctx.get('Range') || undefined, size);
    if (range.kind === 'unsatisfiable') {
      throw apiError('range_not_satisfiable', { message: `the recording has ${size} bytes`, details: { size }, headers: { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' } });
    }
    const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, size - 1];
    let body: Readable | Buffer = Buffer.alloc(0);
    if (ctx.method !== 'HEAD' && end >= start) {
      const stream = await store.read(key, start, end).catch(fail);
      if (!stream) throw apiError('recording_not_found', 'the recording is not in object storage');
      // Past this point the status line is sent: a store that fails mid-way cuts the answer short (the
      // reader sees fewer bytes than Content-Length), and the failure is logged.
      stream.once('error', (err) => svc.logger.warn({ req_id: ctx.state.requestId, call_id: call._id, err: err.message }, 'recording stream broke off'));
      body = stream;
    }
    ctx.status = range.kind === 'partial' ? 206 : 200;
    if (ctx.method !== 'HEAD') ctx.body = body;
    ctx.type = 'audio/wav';
    ctx.length = end - start + 1;
    ctx.set({
      'Accept-Ranges': 'bytes',
      'Cache-Control': 'private, no-store',
      'Content-Disposition': `inline; filename="call-${call._id}.wav"`,
      ...(range.kind === 'partial' ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
      ...(head.etag ? { ETag: head.etag } : {}),
      ...(head.lastModified ? { 'Last-Modified': head.lastModified } : {}),
    });
  });
}
