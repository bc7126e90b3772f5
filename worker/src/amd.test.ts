// Answering machine detection on real calls (docs/design.md §10): dial-outs through livekit-sip to the test
// phone's labelled answers (tests/infra amdAnswers.ts). A machine is hung up on (completed / voicemail) or
// left the message after its beep (completed / voicemail_left: the machine's own recording holds the
// message, spoken after the beep; pocketsphinx recognises it in the bot's channel of the call recording,
// which the machine's recording follows word for word in loudness); a person is greeted at once and the
// call runs as before. A campaign whose rule retries `voicemail` dials the machine again, the person once.
import { dispose } from '@livekit/rtc-node';
import type { Call } from '@voice-platform/schemas';
import { AMD_ANSWERS, amdTimeline, readVoicemail, waitUntil, type AmdAnswer } from '@voice-platform/tests/infra';
import { envelopeMatch, recognise } from '../testing/audio.js';
import { readRecording } from '../testing/recordings.js';
import { admin, callUntil, createApiKey, ensureTrunk, TEST_VARIABLES, dialOut } from '../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';

let w: TestWorker;
let apiKey: string;
beforeAll(async () => {
  apiKey = await createApiKey();
  await ensureTrunk();
  w = await startWorker(telephonyEnv());
});
afterAll(async () => {
  await w?.stop();
  await dispose();
});

const MESSAGE = 'Hello {{customer_name}}, please call us back today.';
const GREETING = 'Hello {{customer_name}}, this is your payment reminder.';

async function screeningBot(onMachine: 'hangup' | 'leave_message'): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', {
    name: `screening bot (${onMachine})`,
    greeting: GREETING,
    variables: TEST_VARIABLES,
    max_call_seconds: 20,
    policy: { intents: [], fallback: { reply: 'Thank you, goodbye.', end_call: true } },
    answering_machine: { detect: true, on_machine: onMachine, message: MESSAGE },
  });
  if (res.status !== 201) throw new Error(`bot: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

const dialout = (botId: string, to: string) => dialOut(apiKey, botId, to);

const ended = (id: string) => callUntil(id, (c) => c.status === 'failed' || c.recording_key !== null || c.recording_error !== null, 'the end of the call and its recording', 90_000);
const answer = (pick: (a: AmdAnswer) => boolean): AmdAnswer => {
  const a = AMD_ANSWERS.find(pick);
  if (!a) throw new Error('no such answer in the phone\'s set');
  return a;
};

it('a machine with a beep, leave_message: the message goes on its recording after the beep; completed / voicemail_left', async () => {
  const machine = answer((a) => a.label === 'machine' && a.beep && !a.noise && a.text === 'Please leave a message after the tone.');
  const callId = await dialout(await screeningBot('leave_message'), machine.number);
  const call: Call = await ended(callId);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'voicemail_left', answered_by: 'machine' });
  expect(call.amd_ms).toBeGreaterThan(0);
  // The bot never greeted the machine; it said the message, once.
  expect(call.transcript.map((t) => [t.role, t.text])).toEqual([
    ['bot', 'Hello Sam, please call us back today.'],
  ]);
  // What the machine recorded: silence over its greeting and beep, then the message.
  const beepEndMs = amdTimeline(machine).beepEndMs!;
  await waitUntil(() => (readVoicemail(process.env.SIP_PHONE_VOICEMAIL_DIR!, machine.number)?.pcm.length ?? 0) > 8000 * 4, { what: 'the machine\'s recording', timeoutMs: 15_000 });
  const heard = readVoicemail(process.env.SIP_PHONE_VOICEMAIL_DIR!, machine.number)!.pcm;
  const onset = heard.findIndex((v) => Math.abs(v) > 2000);
  expect(onset).toBeGreaterThan(0);
  expect((onset / 8000) * 1000).toBeGreaterThanOrEqual(beepEndMs);
  // The bot's own channel of the call recording holds the message, which pocketsphinx recognises (its
  // wideband model hears nothing in 8 kHz audio: the machine's recording itself is compared by loudness).
  const { right: bot } = await readRecording(call.recording_key!);
  expect(recognise(bot, 16000, ['hello sam please call us back today', 'hello sam this is your payment reminder', 'stop calling', 'thank you goodbye'])).toBe('hello sam please call us back today');
  expect(envelopeMatch(heard, 8000, bot, 16000).correlation).toBeGreaterThan(0.9);
});

it('a machine, hangup: completed / voicemail without a word from the bot', async () => {
  const machine = answer((a) => a.label === 'machine' && !a.beep && !a.noise);
  const callId = await dialout(await screeningBot('hangup'), machine.number);
  const call = await ended(callId);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
  expect(call.transcript).toEqual([]);
});

it('a person is greeted at once after their "Hello?", and the call runs as before', async () => {
  const person = answer((a) => a.label === 'human' && a.text === 'Hello?' && !a.noise);
  const callId = await dialout(await screeningBot('hangup'), person.number);
  const call = await ended(callId);
  expect(call).toMatchObject({ status: 'completed', answered_by: 'human' });
  expect(call.end_reason).not.toMatch(/voicemail/);
  // Decided within 1.2 s of the end of their words.
  expect(call.amd_ms! - amdTimeline(person).speechEndMs).toBeLessThanOrEqual(1200);
  expect(call.transcript[0]).toMatchObject({ role: 'bot', text: 'Hello Sam, this is your payment reminder.' });
});

it('a campaign that retries voicemail dials a machine again and a person once', async () => {
  const machine = AMD_ANSWERS.filter((a) => a.label === 'machine' && !a.beep && !a.noise)[1]!;
  const person = answer((a) => a.label === 'human' && a.text === 'Yes?');
  const created = await admin('POST', '/api/v1/campaigns', {
    name: 'voicemail retries',
    bot_id: await screeningBot('hangup'),
    timezone: 'UTC',
    windows: [],
    max_concurrency: 2,
    calls_per_second: 2,
    retry: { max_attempts: 2, delay_seconds: 30, on: ['voicemail'] },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const added = await admin('POST', `/api/v1/campaigns/${id}/contacts`, { contacts: [machine, person].map((a) => ({ to_number: a.number, variables: { customer_name: 'Sam' } })) });
  expect(added.body).toMatchObject({ added: 2, rejected: [] });
  expect((await admin('POST', `/api/v1/campaigns/${id}/start`)).status).toBe(200);
  await waitUntil(async () => (await admin('GET', `/api/v1/campaigns/${id}`)).body.status === 'completed', { what: 'the campaign to complete', timeoutMs: 120_000, intervalMs: 1000 });
  const contacts = (await admin('GET', `/api/v1/campaigns/${id}/contacts?limit=10`)).body.items as Array<{ to_number: string; status: string; attempts: Array<{ call_id: string; end_reason: string | null }> }>;
  const of = (n: string) => contacts.find((c) => c.to_number === n)!;
  // The machine: twice, each time hung up on (the second is the last attempt); the person: once.
  expect(of(machine.number).attempts.map((a) => a.end_reason)).toEqual(['voicemail', 'voicemail']);
  expect(of(person.number).attempts).toHaveLength(1);
  expect(of(person.number).attempts[0]!.end_reason).not.toMatch(/voicemail/);
  for (const a of of(machine.number).attempts) expect((await admin('GET', `/api/v1/calls/${a.call_id}`)).body.answered_by).toBe('machine');
  expect((await admin('GET', `/api/v1/calls/${of(person.number).attempts[0]!.call_id}`)).body.answered_by).toBe('human');
}, 180_000);
