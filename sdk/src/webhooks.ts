// Verifies a webhook delivery as the backend signs it (backend/src/webhooks/deliverer.ts):
// - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`
//   (space-separated, several while a secret rotates), the key being the base64 decoding of the secret after `whsec_`;
// - `X-Voice-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret as shown, "<t>.<body>")>`.
// Each scheme a delivery carries must hold (at least one must be there), within a window around its
// timestamp (replays of an old delivery fail); signatures are compared in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './types.js';

/** How far a delivery's timestamp may be from now (either way), in seconds: the Standard Webhooks default. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** The time to check the timestamp against, in ms (default: now). */
  nowMs?: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === wanted) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

const mac = (key: string | Buffer, prefix: string, body: Buffer) => createHmac('sha256', key).update(prefix, 'utf8').update(body).digest();

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function checkTimestamp(raw: string, opts: VerifyOptions): number {
  if (!/^\d{1,12}$/.test(raw)) throw new WebhookVerificationError('bad_timestamp', `the timestamp ${JSON.stringify(raw.slice(0, 20))} is not unix seconds`);
  const t = Number(raw);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs((opts.nowMs ?? Date.now()) / 1000 - t) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `the delivery's timestamp is more than ${tolerance} s from now`);
  }
  return t;
}

/**
 * Checks a delivery's signatures with the webhook's secret (`whsec_…`, as the create answer showed it) over
 * the raw body exactly as received (not re-serialised JSON), and returns the event. Throws a
 * WebhookVerificationError when a signature or the timestamp does not hold.
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array, opts: VerifyOptions = {}): WebhookEvent {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const swId = header(headers, 'webhook-id');
  const swTimestamp = header(headers, 'webhook-timestamp');
  const swSignature = header(headers, 'webhook-signature');
  const voice = header(headers, 'x-voice-signature');
  const standard = swId !== undefined || swTimestamp !== undefined || swSignature !== undefined;
  if (!standard && voice === undefined) {
    throw new WebhookVerificationError('missing_headers', 'no webhook-signature or X-Voice-Signature header');
  }
  if (standard) {
    if (!swId || !swTimestamp || !swSignature) throw new WebhookVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are all needed');
    const t = checkTimestamp(swTimestamp, opts);
    const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
    const expected = mac(key, `${swId}.${t}.`, body);
    const ok = swSignature
      .split(' ')
      .filter((s) => s.startsWith('v1,'))
      .some((s) => sameBytes(Buffer.from(s.slice(3), 'base64'), expected));
    if (!ok) throw new WebhookVerificationError('bad_signature', 'no webhook-signature matches the body');
  }
  if (voice !== undefined) {
    const parts = voice.split(',').map((p) => p.trim().split('=', 2) as [string, string | undefined]);
    const t = checkTimestamp(parts.find(([k]) => k === 't')?.[1] ?? '', opts);
    const expected = mac(secret, `${t}.`, body);
    const ok = parts.some(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]+$/i.test(v) && sameBytes(Buffer.from(v, 'hex'), expected));
    if (!ok) throw new WebhookVerificationError('bad_signature', 'X-Voice-Signature does not match the body');
  }
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('bad_body', 'the body is not JSON');
  }
}
