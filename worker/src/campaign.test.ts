// A campaign end to end: the suite's backend runs the dialler role, a real worker takes its dial-outs,
// livekit-sip calls the test phone (sipp), which answers, says "stop calling" and is hung up on; its busy
// number answers 486 and its 404 number does not exist. 20 contacts, max_concurrency 3: never more than
// 3 of the campaign's calls live (sampled), busy retried per the rule, the do-not-call number skipped, the
// invalid number never retried, every contact dialled once per attempt, and the campaign completes.
import { PHONE_NUMBERS, waitUntil } from '@voice-platform/tests/infra';
import { dispose } from '@livekit/rtc-node';
import type { Call } from '@voice-platform/schemas';
import { admin, createPolicyBot, ensureTrunk, getCall } from '../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';
import { callsTo } from '../testing/phone.js';

interface Contact {
  id: string;
  to_number: string;
  status: string;
  attempts: Array<{ call_id: string; status?: string; end_reason?: string | null }>;
}

let w: TestWorker;
let botId: string;
beforeAll(async () => {
  await ensureTrunk();
  botId = await createPolicyBot({
    name: 'campaign reminder',
    greeting: 'Hello {{customer_name}}, this is a reminder.',
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 30,
  });
  w = await startWorker(telephonyEnv({ RINGING_TIMEOUT_SECONDS: '6' }));
});
afterAll(async () => {
  await w?.stop();
  await dispose();
});

async function contacts(campaignId: string): Promise<Contact[]> {
  const out: Contact[] = [];
  let cursor: string | null = null;
  do {
    const res = await admin('GET', `/api/v1/campaigns/${campaignId}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    out.push(...(res.body.items as Contact[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return out;
}

describe('a campaign against the test phone', () => {
  it('dials 20 contacts at most 3 at a time, retries busy, skips do-not-call, and completes', async () => {
    // Numbers unique to this run, so the phone's trace tells this run's INVITEs apart.
    const base = 1000 + Math.floor(Math.random() * 8000);
    const answering = Array.from({ length: 17 }, (_, i) => `+1500556${String(base + i).padStart(4, '0')}`);
    const dnc = `+1500557${String(base).padStart(4, '0')}`;
    expect((await admin('POST', '/api/v1/dnc', { numbers: [dnc] })).status).toBeLessThan(300);

    const created = await admin('POST', '/api/v1/campaigns', {
      name: 'e2e reminders',
      bot_id: botId,
      timezone: 'UTC',
      windows: [],
      max_concurrency: 3,
      calls_per_second: 5,
      retry: { max_attempts: 2, delay_seconds: 30, on: ['busy', 'no_answer'] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const rows = [...answering, PHONE_NUMBERS.busy, dnc, PHONE_NUMBERS.notFound].map((to_number, i) => ({ to_number, variables: { customer_name: `Caller ${i}` } }));
    const added = await admin('POST', `/api/v1/campaigns/${id}/contacts`, { contacts: rows });
    expect(added.body).toEqual({ added: 20, duplicates: 0, rejected: [] });
    expect((await admin('POST', `/api/v1/campaigns/${id}/start`)).status).toBe(200);

    // Sample the campaign's live calls until it completes.
    let maxLive = 0;
    let samples = 0;
    let detail: Record<string, any> = {};
    await waitUntil(
      async () => {
        detail = (await admin('GET', `/api/v1/campaigns/${id}`)).body;
        const live = (await contacts(id)).filter((c) => c.status === 'dialing').length;
        maxLive = Math.max(maxLive, live, detail.counts.dialing as number);
        samples++;
        return detail.status === 'completed';
      },
      { what: `the campaign to complete (last: ${JSON.stringify(detail.counts ?? null)})`, timeoutMs: 240_000, intervalMs: 500 },
    );
    expect(samples).toBeGreaterThan(10);
    expect(maxLive).toBeGreaterThan(0);
    expect(maxLive).toBeLessThanOrEqual(3);
    expect(detail.counts).toMatchObject({ pending: 0, dialing: 0, retry_scheduled: 0, completed: 17, busy: 1, failed: 1, skipped_dnc: 1 });

    const all = await contacts(id);
    const by = (n: string) => all.find((c) => c.to_number === n)!;
    // Busy: dialled max_attempts times, each its own call, each busy (486).
    expect(by(PHONE_NUMBERS.busy).attempts).toHaveLength(2);
    for (const a of by(PHONE_NUMBERS.busy).attempts) expect(await getCall(a.call_id)).toMatchObject({ status: 'busy', sip_status_code: 486 });
    // The number that does not exist is never retried; the do-not-call number never dialled.
    expect(by(PHONE_NUMBERS.notFound)).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ call_id: expect.any(String) })] });
    expect(by(dnc)).toMatchObject({ status: 'skipped_dnc', attempts: [] });
    expect(callsTo(dnc)).toBe(0);
    // Every answered contact: one attempt, one call completed by the bot, one SIP call at the phone.
    for (const n of answering) {
      const c = by(n);
      expect({ n, status: c.status, attempts: c.attempts.length, calls: callsTo(n) }).toEqual({ n, status: 'completed', attempts: 1, calls: 1 });
      const call: Call & { campaign_id?: string } = await getCall(c.attempts[0]!.call_id);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup', direction: 'outbound', to_number: n });
    }
    // No call was placed twice for one attempt: every call id is distinct.
    const ids = all.flatMap((c) => c.attempts.map((a) => a.call_id));
    expect(new Set(ids).size).toBe(ids.length);
    await waitUntil(() => w.worker.slots.active === 0, { what: 'the worker idle', timeoutMs: 15_000 });
  }, 300_000);
});
