// Standard Webhooks headers (docs/design.md §13) on real deliveries: the real deliverer posts to a real
// receiver on loopback, and the official verifiers, the npm package `standardwebhooks` and the PyPI one
// (its venv made by scripts/setup.sh), are given the webhook's secret exactly as the create response showed
// it. Both accept what was sent and refuse a tampered body, another secret or a moved timestamp.
import http, { type IncomingHttpHeaders } from 'node:http';
import { spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { Redis } from 'ioredis';
import { startTestEnv, versions, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, type Harness } from '../../testing/harness.js';
import type { WebhookDeliverer } from './deliverer.js';

const PY = path.join(process.env.VP_CACHE_DIR ?? path.join(homedir(), '.cache', 'voice-platform'), `venv-standardwebhooks-${versions.STANDARDWEBHOOKS_VERSION!}`, 'bin', 'python');

interface Got {
  headers: IncomingHttpHeaders;
  raw: Buffer;
}
/** A receiver answering `answers[i]` to its i-th request (the last one after that). */
async function receiver(answers: number[]): Promise<{ url: string; got: Got[]; close(): Promise<void> }> {
  const got: Got[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(answers[Math.min(got.length, answers.length) - 1]!).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    got,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const std = (h: IncomingHttpHeaders) => ({ 'webhook-id': h['webhook-id'] as string, 'webhook-timestamp': h['webhook-timestamp'] as string, 'webhook-signature': h['webhook-signature'] as string });

/** The npm verifier: the parsed event, or the error's message. */
function verifyJs(secret: string, raw: Buffer | string, headers: Record<string, string>): unknown {
  try {
    return new Webhook(secret).verify(raw.toString(), headers);
  } catch (err) {
    if (err instanceof WebhookVerificationError) return `refused: ${err.message}`;
    throw err;
  }
}

/** The PyPI verifier, one process for all cases: per case the event's id, or `refused: <message>`. */
function verifyPy(cases: Array<{ secret: string; raw: Buffer | string; headers: Record<string, string> }>): string[] {
  const script = `
import base64, json, sys
from standardwebhooks import Webhook, WebhookVerificationError
out = []
for c in json.load(sys.stdin):
    try:
        out.append(Webhook(c["secret"]).verify(base64.b64decode(c["raw"]), c["headers"])["id"])
    except WebhookVerificationError as e:
        out.append("refused: " + str(e))
print(json.dumps(out))
`;
  const input = JSON.stringify(cases.map((c) => ({ secret: c.secret, headers: c.headers, raw: Buffer.from(c.raw).toString('base64') })));
  const res = spawnSync(PY, ['-c', script], { input, encoding: 'utf8', timeout: 30_000 });
  if (res.status !== 0) throw new Error(`python verifier failed (${res.status}): ${res.stderr || res.error}`);
  return JSON.parse(res.stdout) as string[];
}

let env: TestEnv;
let h: Harness;
let auth: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  if (!existsSync(PY)) throw new Error(`${PY} is missing: run make setup (scripts/setup.sh installs the standardwebhooks venv)`);
  env = await startTestEnv(['redis']);
});
afterAll(() => env?.stop());
beforeEach(async () => {
  const r = new Redis(env.env.REDIS_URL!);
  await r.flushall();
  r.disconnect();
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { WEBHOOK_ALLOW_PRIVATE: 'true', DIALOUT_BURST: '1000', DIALOUT_RATE_PER_SECOND: '1000' } });
  auth = await adminToken(h);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await h?.close();
});

async function listen(answers: number[]) {
  const r = await receiver(answers);
  cleanups.push(() => r.close());
  return r;
}
function deliverer(): WebhookDeliverer {
  const d = h.deliverer();
  cleanups.push(() => d.stop());
  return d;
}
async function hook(url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const res = await h.http.post('/api/v1/webhooks').set('Authorization', auth).send({ url, events }).expect(201);
  return { id: res.body.id, secret: res.body.secret };
}
/** The secret with its last character changed: another valid secret (every base64 digit of it is in the key). */
const otherSecret = (s: string) => s.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));

describe('Standard Webhooks headers', () => {
  it('a call event is verified by the npm and the PyPI standardwebhooks given the secret as shown; a tampered body, another secret or another timestamp is refused by both', async () => {
    const r = await listen([200]);
    const { secret } = await hook(r.url, ['call.queued']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    const t = await createTrunk(h, auth);
    cleanups.push(() => h.http.delete(`/api/v1/sip/outbound-trunks/${t.id}`).set('Authorization', auth));
    await heartbeat(h.redis, 'w1', { max_calls: 10 }, h.clock.ms + 3_600_000);
    const key = (await createKey(h, auth)).key;
    const botId = await createBot(h, auth, { variables: [{ name: 'customer_name', required: true, description: '' }] });
    const d = deliverer();
    d.start();
    // Not only ASCII: the HMAC is over the body's UTF-8 bytes, as the verifiers read them.
    const dial = await h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, to_number: '+15550109999', variables: { customer_name: 'Zoë Ångström ☎' } }).expect(201);
    await waitUntil(() => r.got.length === 1, { what: 'call.queued', timeoutMs: 20_000 });

    const [x] = r.got;
    const body = JSON.parse(x!.raw.toString('utf8'));
    expect(body).toMatchObject({ type: 'call.queued', data: { call_id: dial.body.call_id, variables: { customer_name: 'Zoë Ångström ☎' } } });
    const voiceT = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(x!.headers['x-voice-signature'] as string)![1]);
    expect(std(x!.headers)).toEqual({
      'webhook-id': body.id,
      'webhook-timestamp': String(Math.floor(h.clock.ms / 1000)),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    });
    expect(x!.headers['webhook-id']).toBe(x!.headers['x-voice-event-id']);
    expect(Number(x!.headers['webhook-timestamp'])).toBe(voiceT); // one signing time for both schemes
    // The library's own signer, given the secret as shown, makes the very header sent.
    expect(new Webhook(secret).sign(body.id, new Date(voiceT * 1000), x!.raw.toString('utf8'))).toBe(x!.headers['webhook-signature']);

    const headers = std(x!.headers);
    const tampered = x!.raw.toString('utf8').replace('Zoë', 'Zoe');
    const moved = { ...headers, 'webhook-timestamp': String(voiceT + 1) };
    const forged = { ...headers, 'webhook-id': 'evt_000000000000000000000000' };
    expect(verifyJs(secret, x!.raw, headers)).toEqual(body);
    expect(verifyJs(secret, tampered, headers)).toBe('refused: No matching signature found');
    expect(verifyJs(secret, `${x!.raw.toString('utf8')} `, headers)).toBe('refused: No matching signature found');
    expect(verifyJs(otherSecret(secret), x!.raw, headers)).toBe('refused: No matching signature found');
    expect(verifyJs(secret, x!.raw, moved)).toBe('refused: No matching signature found');
    expect(verifyJs(secret, x!.raw, forged)).toBe('refused: No matching signature found');
    expect(verifyJs(secret, x!.raw, { ...headers, 'webhook-signature': '' })).toBe('refused: Missing required headers');

    expect(
      verifyPy([
        { secret, raw: x!.raw, headers },
        { secret, raw: tampered, headers },
        { secret, raw: `${x!.raw.toString('utf8')} `, headers },
        { secret: otherSecret(secret), raw: x!.raw, headers },
        { secret, raw: x!.raw, headers: moved },
        { secret, raw: x!.raw, headers: forged },
      ]),
    ).toEqual([body.id, ...Array(5).fill('refused: No matching signature found')]);
  });

  it('a retried event keeps its webhook-id and is signed anew with each attempt\'s webhook-timestamp; both attempts verify in both libraries', async () => {
    const r = await listen([503, 200]);
    const { id, secret } = await hook(r.url, ['call.queued']);
    const other = await hook(r.url, ['call.queued']); // a second webhook: another secret
    const queued = (await h.http.post(`/api/v1/webhooks/${id}/test`).set('Authorization', auth).expect(202)).body;
    const d = deliverer();
    const t1 = Math.floor(h.clock.ms / 1000);
    expect(await d.runOnce()).toEqual({ fannedOut: 1, attempted: 1 });
    h.clock.advance(60_000); // the first retry, a minute later on the deliverer's clock
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 1 });

    expect(r.got).toHaveLength(2);
    expect(r.got.map((x) => [x.headers['webhook-id'], x.headers['webhook-timestamp'], x.headers['x-voice-event-id']])).toEqual([
      [queued.id, String(t1), queued.id],
      [queued.id, String(t1 + 60), queued.id],
    ]);
    expect(r.got[1]!.raw.equals(r.got[0]!.raw)).toBe(true);
    expect(r.got[1]!.headers['webhook-signature']).not.toBe(r.got[0]!.headers['webhook-signature']);
    const event = JSON.parse(r.got[0]!.raw.toString('utf8'));
    for (const x of r.got) expect(verifyJs(secret, x.raw, std(x.headers))).toEqual(event);
    expect(verifyJs(other.secret, r.got[1]!.raw, std(r.got[1]!.headers))).toBe('refused: No matching signature found');
    // The first attempt's signature does not carry over to the second attempt's timestamp.
    const replayed = { ...std(r.got[1]!.headers), 'webhook-signature': r.got[0]!.headers['webhook-signature'] as string };
    expect(verifyJs(secret, r.got[1]!.raw, replayed)).toBe('refused: No matching signature found');
    expect(
      verifyPy([
        ...r.got.map((x) => ({ secret, raw: x.raw, headers: std(x.headers) })),
        { secret: other.secret, raw: r.got[1]!.raw, headers: std(r.got[1]!.headers) },
        { secret, raw: r.got[1]!.raw, headers: replayed },
      ]),
    ).toEqual([queued.id, queued.id, 'refused: No matching signature found', 'refused: No matching signature found']);
  });
});
