// A bot that acts on a phone call (docs/design.md §9): a dial-out to the test phone (LiveKit, livekit-sip,
// sipp) whose scripted bot records the callee's promise through an HTTP tool at a real receiver (the
// stack's demo CRM, tests/infra crm.ts, which refuses requests whose signature does not verify), then
// speaks the reference the CRM answered; the call record lists the action. A tool that times out or
// answers 500 leaves the call going: the bot says on_error_reply and the call ends normally, the
// failure recorded.
import http from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Call } from '@voice-platform/schemas';
import { answeringNumber, startCrm } from '@voice-platform/tests/infra';
import { admin, callUntil, createApiKey, ensureTrunk, TEST_VARIABLES, dialOut } from '../testing/backend.js';
import { startWorker, telephonyEnv, type TestWorker } from '../testing/worker.js';
import { dispose } from '@livekit/rtc-node';

let w: TestWorker;
let apiKey: string;
let crm: http.Server;
let crmUrl: string;
let slow: http.Server;
let slowUrl: string;
const dir = mkdtempSync(path.join(tmpdir(), 'vp-actions-'));
const secretFile = path.join(dir, 'tool-secret');
const promisesFile = path.join(dir, 'promises.jsonl');

beforeAll(async () => {
  apiKey = await createApiKey();
  await ensureTrunk();
  crm = await startCrm({ port: 0, secretFile, promisesFile });
  crmUrl = `http://127.0.0.1:${(crm.address() as AddressInfo).port}/promises`;
  // Answers 500 on /fail, and never in time on /slow.
  slow = http.createServer((req, res) => {
    if (req.url === '/fail') res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"crm down"}');
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  w = await startWorker(telephonyEnv({ TOOLS_ALLOW_PRIVATE_ADDRESSES: 'true' }));
});
afterAll(async () => {
  await w?.stop();
  crm?.closeAllConnections();
  crm?.close();
  slow?.closeAllConnections();
  slow?.close();
  await dispose();
});

/** A bot whose "stop calling" intent (the phone's phrase) records a promise through `url`, then hangs up. */
async function actingBot(url: string): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', {
    name: 'acting bot',
    greeting: 'Hello {{customer_name}}.',
    variables: TEST_VARIABLES,
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 90,
    tools: [
      {
        name: 'record_promise',
        description: 'Records a promise to pay',
        type: 'http',
        url,
        timeout_ms: 1000,
        parameters: { type: 'object', properties: { customer: { type: 'string' }, amount: { type: 'string' } }, required: ['customer'] },
      },
    ],
    policy: {
      intents: [
        {
          name: 'promise',
          examples: ['stop calling'],
          action: { tool: 'record_promise', arguments: { customer: '{{customer_name}}', amount: '{{amount_due}}' } },
          reply: 'Thank you. Your reference is {{result.reference}}.',
          on_error_reply: 'Thank you, I could not note it, goodbye.',
          end_call: true,
        },
      ],
      fallback: { reply: 'Sorry?' },
    },
  });
  if (res.status !== 201) throw new Error(`bot: ${res.status} ${JSON.stringify(res.body)}`);
  const secret = await admin('POST', `/api/v1/bots/${res.body.id}/tool-secret`);
  writeFileSync(secretFile, secret.body.secret as string);
  return res.body.id as string;
}

// A number the phone answers and talks on (+15005555xxx or +15005557xxx: tests/infra answeringNumber).
const answering = answeringNumber;
const dialout = (botId: string) => dialOut(apiKey, botId, answering(), { customer_name: 'Sam', amount_due: '42 dollars' });
const ended = (id: string) => callUntil(id, (c) => c.status === 'completed' && (c.recording_key !== null || c.recording_error !== null), 'the call ended and recorded', 90_000);

it('records the promise through a signed HTTP tool, speaks the reference it answered, and lists the action on the call', async () => {
  const botId = await actingBot(crmUrl);
  const callId = await dialout(botId);
  const call: Call = await ended(callId);
  const promises = readFileSync(promisesFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { reference: string; arguments: object; call_id: string });
  // One request, and the CRM recorded it only because its signature verified with the bot's tool secret.
  expect(promises).toEqual([expect.objectContaining({ reference: 'PTP-1001', arguments: { customer: 'Sam', amount: '42 dollars' }, call_id: callId })]);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
  expect(call.transcript.filter((t) => t.role === 'bot').map((t) => t.text)).toEqual(['Hello Sam.', 'Thank you.', 'Your reference is PTP-1001.']);
  expect(call.actions).toEqual([
    {
      type: 'tool',
      name: 'record_promise',
      at: expect.any(String),
      duration_ms: expect.any(Number),
      status: 'ok',
      arguments: { customer: 'Sam', amount: '42 dollars' },
      result: '{"reference":"PTP-1001","recorded":true}',
      error: null,
    },
  ]);
});

it.each([
  ['times out', '/slow', 'timeout'],
  ['answers 500', '/fail', 'http_500'],
])('a tool that %s: the call goes on, the bot says on_error_reply and ends normally, the failure recorded', async (_what, route, error) => {
  const botId = await actingBot(`${slowUrl}${route}`);
  const call = await ended(await dialout(botId));
  expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup' });
  expect(call.transcript.filter((t) => t.role === 'bot').map((t) => t.text)).toContain('Thank you, I could not note it, goodbye.');
  expect(call.actions).toEqual([expect.objectContaining({ type: 'tool', name: 'record_promise', status: 'failed', error, arguments: { customer: 'Sam', amount: '42 dollars' } })]);
});
