// The campaign dialler as it runs in production: real backend processes (dist/main.js, built by `tsc -b`
// before jest runs) with ROLES=dialler on the stores of a harness. One is killed with SIGKILL in the middle
// of a campaign; two fresh replicas finish it side by side. Every contact is dialled once, none is lost.
import { saveLogs, startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { FLEET_RESERVATIONS_KEY, FLEET_WORKERS_KEY } from '@voice-platform/schemas';
import { adminToken, createBot, createTrunk, heartbeat, startHarness, type Harness } from '../../testing/harness.js';
import { startBackendProcess, type BackendProcess } from '../../testing/process.js';
import { COLLECTIONS } from '../core/collections.js';
import { findCalls } from '../calls/store.js';
import { attemptCallId } from './dialler.js';
import type { ContactDoc } from './store.js';

let env: TestEnv;
let h: Harness;
const children: BackendProcess[] = [];

beforeAll(async () => {
  env = await startTestEnv(['redis']);
  h = await startHarness({ redisUrl: env.env.REDIS_URL });
});
afterAll(async () => {
  for (const [i, c] of children.entries()) {
    c.child.kill('SIGKILL');
    saveLogs(`campaign-dialler-${i}`, c.log());
  }
  await h.close();
  await env.stop();
});

async function dialler(): Promise<BackendProcess> {
  const p = await startBackendProcess(h, env.env.REDIS_URL!, { CAMPAIGN_TICK_MS: '20', CAMPAIGN_LEASE_MS: '500' });
  children.push(p);
  return p;
}

it('a dialler killed mid-campaign (SIGKILL) and two replicas taking over dial every contact exactly once', async () => {
  const auth = await adminToken(h);
  await createTrunk(h, auth, { numbers: ['+15550003000'] });
  const botId = await createBot(h, auth, {});
  await h.redis.del(FLEET_WORKERS_KEY, FLEET_RESERVATIONS_KEY);
  await heartbeat(h.redis, 'w1', { max_calls: 1000 }, Date.now() + 600_000); // the processes use real time
  const campaign = await h.http
    .post('/api/v1/campaigns')
    .set('Authorization', auth)
    .send({ name: 'kill test', bot_id: botId, timezone: 'UTC', windows: [], max_concurrency: 100, calls_per_second: 10, retry: { max_attempts: 1, delay_seconds: 30, on: [] } })
    .expect(201);
  const id = campaign.body.id as string;
  const contacts = Array.from({ length: 40 }, (_, i) => ({ to_number: `+4915200${String(i).padStart(6, '0')}` }));
  expect((await h.http.post(`/api/v1/campaigns/${id}/contacts`).set('Authorization', auth).send({ contacts }).expect(200)).body).toEqual({ added: 40, duplicates: 0, rejected: [] });
  await h.http.post(`/api/v1/campaigns/${id}/start`).set('Authorization', auth).expect(200);

  const calls = () => findCalls(h.db, { campaign_id: id });
  const first = await dialler();
  await waitUntil(async () => (await calls()).length >= 8, { what: 'the first dialler to dial', timeoutMs: 90_000 });
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  const dialledBeforeKill = (await calls()).length;
  expect(dialledBeforeKill).toBeLessThan(40);

  await Promise.all([dialler(), dialler()]);
  const docs = () => h.db.collection<ContactDoc>(COLLECTIONS.campaignContacts).find({ campaign_id: id }).toArray();
  await waitUntil(async () => (await docs()).every((c) => c.status === 'dialing'), { what: 'every contact dialled', timeoutMs: 120_000 });
  const all = await calls();
  expect(all).toHaveLength(40);
  expect(new Set(all.map((c) => c.to_number)).size).toBe(40);
  for (const c of await docs()) expect([c.to_number, (c.attempts ?? []).map((a) => a.call_id)]).toEqual([c.to_number, [attemptCallId(c._id, 1)]]);
}, 360_000);
