// Live supervision (docs/design.md §16): POST /api/v1/calls/{id}/control on the real backend reaches the worker
// running the call (Redis pub/sub on the call's channel): `say` is heard by the caller at once and is in the
// transcript, `instruct` is on the timeline, `end` hangs up. Who may, and what a call not in progress answers.
import { WebSocket } from 'ws';
import { rms, silence, trimmedSpeech } from '../testing/audio.js';
import { admin, adminAuth, backendUrl, callUntil, createBot } from '../testing/backend.js';
import { startCall, type TestCaller } from '../testing/client.js';
import { startWorker, type TestWorker } from '../testing/worker.js';

let w: TestWorker;
beforeAll(async () => {
  w = await startWorker();
});
afterAll(async () => {
  await w?.stop();
});

const POLICY = {
  intents: [{ name: 'amount', examples: ['how much'], reply: 'It is forty dollars.' }],
  fallback: { reply: 'Sorry, what was that?' },
};
const botTexts = (c: TestCaller) => c.messages.filter((m) => m.type === 'transcript' && m.role === 'bot').map((m) => m.text);
const control = (id: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${backendUrl()}/api/v1/calls/${id}/control`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
const asAdmin = async (id: string, body: object) => admin('POST', `/api/v1/calls/${id}/control`, body);

/** Streams silence until `done` (checked per 20 ms frame). */
async function silenceUntil(c: TestCaller, done: () => boolean, maxMs: number): Promise<void> {
  for (let ms = 0; !done() && ms < maxMs; ms += 20) await c.stream(silence(20));
}

async function keyWith(scopes: string[]): Promise<string> {
  const res = await admin('POST', '/api/v1/api-keys', { name: `supervision ${scopes.join(' ')}`, scopes });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

describe('live supervision: POST /calls/{id}/control', () => {
  it('say is heard now and in the transcript, instruct is on the timeline, end hangs up; every control in the audit log', async () => {
    const bot = await createBot({ name: 'supervised', greeting: '', policy: POLICY });
    const { caller, callId } = await startCall(w.wsUrl, bot);
    await callUntil(callId, (c) => c.status === 'in_progress', 'in progress');
    const said = await asAdmin(callId, { type: 'say', text: 'A supervisor joined the call.' });
    expect(said.status).toBe(202);
    expect(said.body).toEqual({ call_id: callId, type: 'say', at: expect.any(String) });
    await silenceUntil(caller, () => botTexts(caller).length > 0 && caller.audio.length > 10, 5000);
    expect(botTexts(caller)).toEqual(['A supervisor joined the call.']);
    expect((await asAdmin(callId, { type: 'instruct', text: 'Offer a payment plan.' })).status).toBe(202);
    // The bot still answers the caller (the scripted policy ignores instructions).
    await caller.stream(trimmedSpeech('how much'));
    await silenceUntil(caller, () => botTexts(caller).length > 1, 5000);
    expect(botTexts(caller)[1]).toBe('It is forty dollars.');
    expect((await asAdmin(callId, { type: 'end' })).status).toBe(202);
    await caller.closed;

    const call = await callUntil(callId, (c) => c.status === 'completed', 'the end');
    expect(call.end_reason).toBe('supervisor_ended');
    expect(call.transcript.filter((e) => e.role === 'bot').map((e) => e.text)).toEqual(['A supervisor joined the call.', 'It is forty dollars.']);
    const controls = call.actions.filter((a) => a.type === 'control');
    expect(controls.map((a) => [a.name, a.status, a.arguments])).toEqual([
      ['say', 'ok', { by: `user:${process.env.VP_ADMIN_EMAIL}`, text: 'A supervisor joined the call.' }],
      ['instruct', 'ok', { by: `user:${process.env.VP_ADMIN_EMAIL}`, text: 'Offer a payment plan.' }],
      ['end', 'ok', { by: `user:${process.env.VP_ADMIN_EMAIL}` }],
    ]);
    const audit = await admin('GET', `/api/v1/audit?resource_type=call&resource_id=${callId}`);
    expect(audit.status).toBe(200);
    expect((audit.body.items as Array<{ action: string }>).map((e) => e.action).sort()).toEqual(['call.control.end', 'call.control.instruct', 'call.control.say']);

    // Over: 409, and nothing is published to a call nobody runs.
    const late = await asAdmin(callId, { type: 'say', text: 'Hello?' });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('call_not_active');
  });

  it('refuses what a control cannot be, keys without calls:control and other keys’ calls', async () => {
    const bot = await createBot({ name: 'supervised 2', greeting: '', policy: POLICY });
    const { caller, callId } = await startCall(w.wsUrl, bot);
    try {
      await callUntil(callId, (c) => c.status === 'in_progress', 'in progress');
      for (const [body, field] of [
        [{ type: 'say' }, 'text'],
        [{ type: 'transfer' }, 'to'],
        [{ type: 'end', text: 'x' }, 'text'],
        [{ type: 'transfer', to: '12345' }, 'to'],
        [{ type: 'shout', text: 'x' }, 'type'],
      ] as const) {
        const res = await asAdmin(callId, body);
        expect(res.status).toBe(422);
        expect(JSON.stringify(res.body.error.details)).toContain(field);
      }
      // A key without the scope: 403; with it, a call it did not place (this one is a test call): 404.
      const reader = await keyWith(['calls:read']);
      expect((await control(callId, { type: 'end' }, { 'X-API-Key': reader })).status).toBe(403);
      const controller = await keyWith(['calls:control']);
      const other = await control(callId, { type: 'end' }, { 'X-API-Key': controller });
      expect(other.status).toBe(404);
      expect(((await other.json()) as { error: { code: string } }).error.code).toBe('call_not_found');
      expect((await control('no-such-call', { type: 'end' }, { 'X-API-Key': controller })).status).toBe(404);
      // The call went on untouched.
      expect(caller.closeCode).toBeNull();
    } finally {
      caller.send({ type: 'stop' });
      await caller.closed;
    }
  });
});

describe('listening in: GET /calls/{id}/listen (WebSocket)', () => {
  it('streams both sides of the call as 16 kHz PCM frames tagged by side, and closes when the call ends', async () => {
    const bot = await createBot({ name: 'listened', greeting: '', policy: POLICY });
    const { caller, callId } = await startCall(w.wsUrl, bot);
    await callUntil(callId, (c) => c.status === 'in_progress', 'in progress');
    // Without the upgrade: 400, nothing streamed.
    const plain = await fetch(`${backendUrl()}/api/v1/calls/${callId}/listen`, { headers: { Authorization: await adminAuth() } });
    expect(plain.status).toBe(400);
    const ws = new WebSocket(`${backendUrl().replace(/^http/, 'ws')}/api/v1/calls/${callId}/listen`, { headers: { Authorization: await adminAuth() } });
    const frames: Array<{ side: number; pcm: Int16Array }> = [];
    ws.on('message', (data: Buffer) => {
      const pcm = new Int16Array(data.buffer.slice(data.byteOffset + 1, data.byteOffset + data.length));
      frames.push({ side: data[0]!, pcm });
    });
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const loud = (side: number) => frames.filter((f) => f.side === side && rms(f.pcm) > 1000).length;
    await caller.stream(trimmedSpeech('how much'));
    await silenceUntil(caller, () => botTexts(caller).length > 0 && loud(1) > 20, 8000);
    // The caller's words and the bot's reply, each on its side, in 20 ms frames of 16 kHz (320 samples).
    expect(loud(0)).toBeGreaterThan(10);
    expect(loud(1)).toBeGreaterThan(20);
    expect(new Set(frames.map((f) => f.side))).toEqual(new Set([0, 1]));
    expect(frames.every((f) => f.pcm.length === 320)).toBe(true);
    caller.send({ type: 'stop' });
    await caller.closed;
    expect(await closed).toBe(1000);
    const audit = await admin('GET', `/api/v1/audit?resource_type=call&resource_id=${callId}&action=call.listen`);
    expect(audit.body.items).toHaveLength(1);
    // The call is over: 409 before any upgrade.
    const late = new WebSocket(`${backendUrl().replace(/^http/, 'ws')}/api/v1/calls/${callId}/listen`, { headers: { Authorization: await adminAuth() } });
    const status = await new Promise<number>((resolve) => late.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(409);
  });
});
