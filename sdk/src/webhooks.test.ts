// verifyWebhook on a real delivery: the backend (jest.global-setup.js, dialler role on) posts call.queued
// to a receiver here after a dial-out through the SDK; its headers and raw body verify with the secret the
// webhook's create answer showed, under either signature scheme. A changed body, another secret, an old
// or missing timestamp do not.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { waitUntil } from '@voice-platform/tests/infra';
import { createClient, verifyWebhook, WebhookVerificationError } from './index.js';
import { baseUrl, suiteBackend, type SuiteBackend } from './testing.js';

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}
const received: Delivery[] = [];
let receiver: http.Server;
let suite: SuiteBackend;

const admin = <T = any>(method: string, path: string, body?: unknown) => suite.admin<T>(method, path, body);

function reason(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
  return 'verified';
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  suite = await suiteBackend('sdk-webhook-tests');
});
afterAll(async () => {
  await suite?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

it('a real call.queued delivery verifies; a changed body, another secret and an old timestamp do not', async () => {
  const { port } = receiver.address() as AddressInfo;
  const hook = await admin<{ id: string; secret: string }>('POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${port}/hooks/${randomUUID()}`, events: ['call.queued'] });
  expect(hook.secret).toMatch(/^whsec_/);
  const botId = (await admin<{ id: string }>('POST', '/api/v1/bots', { name: 'sdk webhook bot' })).id;
  const apiKey = (await admin<{ key: string }>('POST', '/api/v1/api-keys', { name: 'sdk webhooks', scopes: ['dialout', 'calls:read'] })).key;
  const placed = await createClient({ baseUrl: baseUrl(), apiKey }).dialout({ bot_id: botId, to_number: '+4915200000200' });

  let delivery: Delivery | undefined;
  await waitUntil(
    () => (delivery = received.find((d) => (JSON.parse(d.body.toString()) as { data: { call_id?: string } }).data.call_id === placed.call_id)) !== undefined,
    { what: 'the call.queued delivery', timeoutMs: 30_000 },
  );
  const { headers, body } = delivery!;
  expect(Object.keys(headers)).toEqual(expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-voice-signature']));

  const event = verifyWebhook(hook.secret, headers, body);
  expect(event).toMatchObject({ type: 'call.queued', data: { call_id: placed.call_id, bot_id: botId, status: 'queued' } });
  expect(event.id).toBe(headers['webhook-id']);
  // The body as text, and the headers as a fetch Headers, verify the same.
  expect(verifyWebhook(hook.secret, new Headers(headers as Record<string, string>), body.toString('utf8')).id).toBe(event.id);
  // Each scheme on its own.
  const { 'x-voice-signature': voice, ...standard } = headers;
  expect(reason(() => verifyWebhook(hook.secret, standard, body))).toBe('verified');
  expect(reason(() => verifyWebhook(hook.secret, { 'x-voice-signature': voice }, body))).toBe('verified');

  // The call id's last hex digit changed (to one it is not: a fixed '0' left an id ending in 0 untouched).
  const last = placed.call_id.slice(-1);
  const tampered = Buffer.from(body.toString('utf8').replace(placed.call_id, `${placed.call_id.slice(0, -1)}${last === '0' ? '1' : '0'}`));
  expect(tampered.equals(body)).toBe(false);
  expect(reason(() => verifyWebhook(hook.secret, headers, tampered))).toBe('bad_signature');
  expect(reason(() => verifyWebhook(hook.secret, standard, tampered))).toBe('bad_signature');
  expect(reason(() => verifyWebhook(hook.secret, { 'x-voice-signature': voice }, tampered))).toBe('bad_signature');
  expect(reason(() => verifyWebhook(`whsec_${'A'.repeat(32)}`, headers, body))).toBe('bad_signature');
  // Replayed ten minutes later, the delivery is too old (the signatures themselves still match).
  const later = Date.now() + 10 * 60_000;
  expect(reason(() => verifyWebhook(hook.secret, headers, body, { nowMs: later }))).toBe('timestamp_out_of_tolerance');
  expect(reason(() => verifyWebhook(hook.secret, { 'x-voice-signature': voice }, body, { nowMs: later }))).toBe('timestamp_out_of_tolerance');
  // A timestamp moved to now no longer matches its signature.
  const now = String(Math.floor(later / 1000));
  expect(reason(() => verifyWebhook(hook.secret, { ...standard, 'webhook-timestamp': now }, body, { nowMs: later }))).toBe('bad_signature');
  expect(reason(() => verifyWebhook(hook.secret, {}, body))).toBe('missing_headers');
  expect(reason(() => verifyWebhook(hook.secret, { 'webhook-id': String(headers['webhook-id']) }, body))).toBe('missing_headers');
});
