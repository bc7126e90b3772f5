// Transfer to a person (docs/design.md §9), with real services: a scripted bot whose intent acts with a
// transfer_call tool. Cold: the bot says the announcement, livekit-sip sends the phone a REFER (the test
// phone answers 202 and NOTIFY 200, and logs the target in refer.log), the call ends completed /
// transferred; a REFER refused (603) makes the bot say on_failure and the call goes on. Warm: the worker
// dials the agent number into the caller's room kept apart from the caller (livekit-server v1.13.5 has no
// MoveParticipant: see transports/livekit.ts), whispers to it (the agent's ear hears it), puts the two
// together and leaves: the slot is free while the two talk, and the room goes when the last one leaves. A
// WebSocket call has no phone line: it ends as a transfer would.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, existsSync } from 'node:fs';
import { dispose } from '@livekit/rtc-node';
import { RoomServiceClient } from 'livekit-server-sdk';
import { Redis } from 'ioredis';
import { CALL_LEASES_KEY, FLEET_RESERVATIONS_KEY, type Call, type RuntimeConfig } from '@voice-platform/schemas';
import { answeringNumber, listenNumber, PHONE_NUMBERS, PhoneEar, waitUntil } from '@voice-platform/tests/infra';
import { envelopeMatch } from '../testing/audio.js';
import { readRecording } from '../testing/recordings.js';
import { admin, callUntil, createApiKey, ensureTrunk, TEST_VARIABLES, dialOut } from '../testing/backend.js';
import { startCall } from '../testing/client.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';
import { createProviders } from './app/providers.js';
import { loadSettings } from './core/settings.js';
import { speak } from './tts/tts.js';

let w: TestWorker;
let apiKey: string;
let redis: Redis;
/** call.ended webhooks the suite's backend sent here (every test file's calls: read by call id). */
const endedHooks: Array<{ data: { call_id: string; end_reason: string; transfer: unknown; actions: unknown[] } }> = [];
let receiver: http.Server;
let hookId: string;
const rooms = () => new RoomServiceClient(process.env.LIVEKIT_URL!.replace(/^ws/, 'http'), process.env.LIVEKIT_API_KEY!, process.env.LIVEKIT_API_SECRET!);

beforeAll(async () => {
  apiKey = await createApiKey();
  await ensureTrunk();
  redis = new Redis(process.env.REDIS_URL!);
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      endedHooks.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = await admin('POST', '/api/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['call.ended'] });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  hookId = hook.body.id as string;
  w = await startWorker(telephonyEnv());
});
afterAll(async () => {
  if (hookId) await admin('DELETE', `/api/v1/webhooks/${hookId}`);
  receiver?.closeAllConnections();
  receiver?.close();
  await w?.stop();
  redis?.disconnect();
  await dispose();
});

const ANNOUNCEMENT = 'Let me put you through to a colleague.';
const ON_FAILURE = 'Nobody can take your call right now.';
const WHISPER = 'Sam says {{summary}}, about the unpaid invoice.';

/** A bot whose intent (the phone's phrase "yes i will pay", or the key 0) hands the caller over with a transfer_call tool. */
async function transferBot(mode: 'cold' | 'warm', number: string, maxCallSeconds = 90): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', {
    name: `${mode} transfer bot`,
    greeting: 'Hello {{customer_name}}.',
    variables: TEST_VARIABLES,
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: maxCallSeconds,
    tools: [
      {
        name: 'to_person',
        description: 'Hands the caller to a person',
        type: 'transfer_call',
        mode,
        destinations: [{ name: 'billing', number, description: 'the billing desk' }],
        announcement: ANNOUNCEMENT,
        on_failure: ON_FAILURE,
        ...(mode === 'warm' ? { whisper: WHISPER } : {}),
      },
    ],
    policy: {
      intents: [
        { name: 'pay', examples: ['i will pay'], reply: 'You are through.', action: { tool: 'to_person', arguments: { destination: 'billing' } } },
        { name: 'person', examples: [], dtmf: '0', reply: 'You are through.', action: { tool: 'to_person' } },
      ],
      fallback: { reply: 'Sorry?' },
    },
  });
  if (res.status !== 201) throw new Error(`bot: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const dialout = (botId: string, to: string) => dialOut(apiKey, botId, to);

// A number the phone answers and talks on (tests/infra answeringNumber).
const answering = answeringNumber;
const ended = (c: Call) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null;
const botLines = (c: Call) => c.transcript.filter((t) => t.role === 'bot').map((t) => t.text);

/** The REFERs the suite's phone received: the `<Call-ID> <Refer-To>` lines of its refer.log. */
function refers(): string[] {
  const file = process.env.SIP_PHONE_REFER_LOG!;
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The worker holds no call any more: its slot back, no reservation, no lease. */
async function slotFreed(callId: string): Promise<void> {
  await waitUntil(
    async () => {
      const res = (await (await fetch(`${w.url}/health/fleet`)).json()) as { workers: Array<{ worker_id: string; active_calls: number }> };
      return res.workers.find((x) => x.worker_id === w.settings.WORKER_ID)?.active_calls === 0;
    },
    { what: 'the slot back in /health/fleet', timeoutMs: 15_000 },
  );
  expect(await redis.zscore(FLEET_RESERVATIONS_KEY, callId)).toBeNull();
  await waitUntil(async () => (await redis.zscore(CALL_LEASES_KEY, callId)) === null, { what: 'the lease gone', timeoutMs: 15_000 });
}

describe('cold transfer (SIP REFER)', () => {
  it('the phone gets the REFER with the target; the call ends completed / transferred with its transfer and action', async () => {
    const target = '+15005550177';
    const before = refers().length;
    const callId = await dialout(await transferBot('cold', target), answering());
    const call = await callUntil(callId, ended, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred' });
    expect(call.transfer).toEqual({ mode: 'cold', target, status: 'accepted', sip_status_code: 202, at: expect.any(String) });
    expect(botLines(call)).toEqual(['Hello Sam.', 'Let me put you through to a colleague.']);
    expect(call.actions).toEqual([
      expect.objectContaining({ type: 'transfer', name: 'to_person', status: 'ok', arguments: { destination: 'billing' }, error: null }),
    ]);
    // One REFER, for this transfer, naming the target.
    const lines = refers().slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\S+ <?tel:\\${target}>?$`));
    await slotFreed(callId);
    // The CRM learns it from call.ended: the end reason, the transfer and the action.
    await waitUntil(() => endedHooks.some((h) => h.data.call_id === callId), { what: 'call.ended at the receiver', timeoutMs: 15_000 });
    const hook = endedHooks.find((h) => h.data.call_id === callId)!;
    expect(hook.data).toMatchObject({ end_reason: 'transferred', transfer: call.transfer, actions: call.actions });
  });

  it('a REFER refused (603): the bot says on_failure and the call goes on', async () => {
    const callId = await dialout(await transferBot('cold', '+15005550178', 20), PHONE_NUMBERS.refusesTransfer);
    const call = await callUntil(callId, ended, 'the end of the call and its recording', 60_000);
    // The call went on after the refusal, until the bot's time limit.
    expect(call).toMatchObject({ status: 'completed', end_reason: 'max_duration' });
    expect(call.transfer).toEqual({ mode: 'cold', target: '+15005550178', status: 'failed', sip_status_code: 603, at: expect.any(String) });
    expect(botLines(call)).toEqual(['Hello Sam.', 'Let me put you through to a colleague.', ON_FAILURE]);
    expect(call.actions).toEqual([expect.objectContaining({ type: 'transfer', name: 'to_person', status: 'failed', error: 'transfer_failed' })]);
    await slotFreed(callId);
  });
});

describe('warm transfer (whisper, then the two together)', () => {
  it('the agent hears the whisper and the caller only the hold tone; then the two talk, the bot gone and its slot free; the room goes with the last one', async () => {
    // Both the caller (a listening number) and the agent answer with their media at the ear: two streams, the caller's first.
    const ear = await PhoneEar.open(Number(process.env.SIP_PHONE_EAR_PORT));
    try {
      const callId = await dialout(await transferBot('warm', PHONE_NUMBERS.agent), listenNumber(45));
      // The caller presses 0 (the intent "person") once the line is up.
      await ear.press('0#');
      const call = await callUntil(callId, (c) => c.status === 'completed' && c.recording_key !== null, 'the bot’s end of the call', 60_000);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred', recording_error: null });
      expect(call.transfer).toEqual({ mode: 'warm', target: PHONE_NUMBERS.agent, status: 'accepted', sip_status_code: 200, at: expect.any(String) });
      expect(call.transcript.map((t) => [t.role, t.text])).toEqual([
        ['bot', 'Hello Sam.'],
        ['user', '0'],
        ['bot', 'Let me put you through to a colleague.'],
      ]);
      expect(call.actions.map((a) => [a.type, a.name, a.status])).toEqual([
        ['dtmf_in', 'keypad', 'ok'],
        ['transfer', 'to_person', 'ok'],
      ]);

      // The caller and the agent talk on in the caller's room without the bot.
      await waitUntil(async () => !(await rooms().listParticipants(callId)).some((p) => p.identity === 'bot'), { what: 'the bot gone from the room', timeoutMs: 10_000 });
      expect((await rooms().listParticipants(callId)).map((p) => p.identity).sort()).toEqual(['agent', 'callee']);
      await slotFreed(callId);
      expect((await rooms().listParticipants(callId)).map((p) => p.identity).sort()).toEqual(['agent', 'callee']);

      const [callerLine, agentLine] = ear.heard().map((h) => h.pcm);
      expect(agentLine).toBeDefined();
      // The agent heard the whisper, with the caller's turns as its summary.
      const whisper = await synthesise('Sam says 0, about the unpaid invoice.');
      const start = Math.max(0, agentLine!.findIndex((v) => Math.abs(v) > 2000) - 1600);
      expect(envelopeMatch(agentLine!.subarray(start), 8000, whisper, 16000).correlation).toBeGreaterThan(0.8);
      // The caller heard the bot (greeting, announcement) and, after it, only the hold tone: neither the
      // agent's answer ("Hello, this is Sam.") nor the whisper, though the agent was in the room.
      const { right: bot } = await readRecording(call.recording_key!);
      // The line and the recording both start at the answer: the bot's last word ends at about the same
      // time in both, and nothing loud follows on the line (the agent's answer and the whisper would).
      const lastLoud = (pcm: Int16Array, rate: number) => {
        let i = pcm.length - 1;
        while (i > 0 && Math.abs(pcm[i]!) < 3000) i--;
        return (i / rate) * 1000;
      };
      const saidMs = lastLoud(bot, 16000);
      const lineMs = lastLoud(callerLine!, 8000);
      expect(Math.abs(lineMs - saidMs)).toBeLessThan(1000);
      const after = callerLine!.subarray(Math.round((saidMs + 500) * 8));
      expect(after.length).toBeGreaterThan(8000 * 3); // the line stayed up through the dial and the whisper
      let loudest = 0;
      for (const v of after) loudest = Math.max(loudest, Math.abs(v));
      expect(loudest).toBeLessThan(3000);
      expect(loudest).toBeGreaterThan(1000); // the hold tone (2000)

      // The caller hangs up; the agent stays until its own hang-up (20 s after answering); then the room is deleted.
      await rooms().removeParticipant(callId, 'callee');
      await waitUntil(async () => (await rooms().listRooms([callId])).length === 0, { what: 'the room deleted after the last one left', timeoutMs: 60_000 });
    } finally {
      await ear.close();
    }
  }, 120_000);

  it('a busy agent (486): the bot says on_failure and the call goes on', async () => {
    const callId = await dialout(await transferBot('warm', PHONE_NUMBERS.agentBusy, 20), answering());
    const call = await callUntil(callId, ended, 'the end of the call and its recording', 60_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'max_duration' });
    expect(call.transfer).toEqual({ mode: 'warm', target: PHONE_NUMBERS.agentBusy, status: 'failed', sip_status_code: 486, at: expect.any(String) });
    expect(botLines(call)).toEqual(['Hello Sam.', 'Let me put you through to a colleague.', ON_FAILURE]);
    await slotFreed(callId);
  });
});

describe('a WebSocket call', () => {
  it('has no phone line: the announcement is said and the call ends as a transfer would', async () => {
    const botId = await transferBot('cold', '+15005550179');
    const { caller, callId } = await startCall(w.wsUrl, botId, { customer_name: 'Sam' });
    caller.send({ type: 'dtmf', digits: '0#' });
    await caller.until(() => caller.message('ended'), 'the end of the call');
    expect(caller.message('ended')).toMatchObject({ reason: 'transferred' });
    const call = await callUntil(callId, ended, 'the call record', 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred' });
    expect(call.transfer).toEqual({ mode: 'cold', target: '+15005550179', status: 'accepted', sip_status_code: null, at: expect.any(String) });
    expect(call.transcript.map((t) => [t.role, t.text])).toEqual([
      ['bot', 'Hello Sam.'],
      ['user', '0'],
      ['bot', 'Let me put you through to a colleague.'],
    ]);
    expect(call.actions.map((a) => [a.type, a.name, a.status])).toEqual([
      ['dtmf_in', 'keypad', 'ok'],
      ['transfer', 'to_person', 'ok'],
    ]);
  });
});

/** `text` as the bot's TTS (espeak-ng, the default voice) says it, at 16 kHz. */
async function synthesise(text: string): Promise<Int16Array> {
  const settings = loadSettings({ SERVICE_CONFIG_URL: 'http://127.0.0.1:9/api/v1/config', WORKER_AUTH_TOKEN: 'transfer-test-token-0123456789' });
  const cfg = { bot: { voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 }, stt: { provider: 'pocketsphinx', model: 'default', language: 'en' }, llm: { provider: 'scripted', model: 'x', temperature: 0 }, language: 'en' }, call: null, audio: { sample_rate: 16000 } } as unknown as RuntimeConfig;
  const { tts, retry } = await createProviders(cfg, settings);
  const parts: Int16Array[] = [];
  for await (const pcm of speak(tts, text, new AbortController().signal, retry, 16000)) parts.push(pcm);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
