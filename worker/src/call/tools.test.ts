// A call whose OpenAI-compatible bot runs an HTTP tool: the call's real pipeline (VAD, pocketsphinx,
// the LLM stage against the cloud stand-in, espeak) with the bot's tools from its runtime config. The
// receiver gets one signed request with the call's identity, the bot speaks a value from the tool's
// answer, and the call's end event carries the action.
import http from 'node:http';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { CallEvent, RuntimeConfig } from '@voice-platform/schemas';
import { createLogger } from '../core/logger.js';
import { createMetrics } from '../core/metrics.js';
import { createProviders } from '../app/providers.js';
import { loadSettings } from '../core/settings.js';
import { silence, speech } from '../../testing/audio.js';
import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import type { CallTransport, TransportHandlers } from '../transports/transport.js';
import type { ServerMessage } from '../pipeline/frames.js';
import { CallSession } from './session.js';

const SECRET = 'whsec_call_tools_0123456789';
let cloud: CloudStandIn;
let receiver: http.Server;
let base: string;
let dir: string;
const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  cloud = await startCloudStandIn();
  dir = await mkdtemp(path.join(tmpdir(), 'vp-call-tools-'));
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ reference: 'PTP-1042' }));
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await cloud.close();
  await rm(dir, { recursive: true, force: true });
});

/** The caller's side of the call: what the bot sent, and the audio the test streams in real time. */
class Caller implements CallTransport {
  readonly kind = 'websocket' as const;
  readonly messages: ServerMessage[] = [];
  private handlers: TransportHandlers | null = null;
  private waiters: Array<() => void> = [];
  attach(h: TransportHandlers): void {
    this.handlers = h;
  }
  sendAudio(): void {}
  sendMessage(msg: ServerMessage): void {
    this.messages.push(msg);
    for (const w of this.waiters.splice(0)) w();
  }
  close(): void {}
  /** Resolves once a message matches. */
  async until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  async stream(pcm: Int16Array, frameMs = 20): Promise<void> {
    const n = (16000 * frameMs) / 1000;
    const start = performance.now();
    for (let i = 0, k = 0; i < pcm.length; i += n, k++) {
      this.handlers?.onAudio(pcm.subarray(i, i + n));
      const wait = start + (k + 1) * frameMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait)); // real-time pacing of the caller's audio
    }
  }
}

it('runs the bot HTTP tool, speaks from its answer and reports the action with the call end', async () => {
  const cfg = {
    bot: {
      id: 'bot_tools',
      name: 'tools',
      language: 'en',
      prompt: 'You collect promises to pay.',
      greeting: '',
      voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 },
      stt: { provider: 'pocketsphinx', model: 'default', language: 'en' },
      llm: { provider: 'openai', model: 'gpt-4o-mini', temperature: 0 },
      tools: [
        {
          name: 'record_promise',
          description: 'Records a promise to pay',
          type: 'http',
          url: `${base}/promises`,
          method: 'POST',
          headers: { Authorization: 'Bearer crm' },
          timeout_ms: 3000,
          parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
        },
      ],
      tool_secret: SECRET,
      policy: { intents: [{ name: 'pay', examples: ['how much'], reply: 'x' }], fallback: { reply: 'x' } },
      // Fixed: the stand-in answers requests in order, and a smart turn may ask ahead on a pause's words.
      turn_detection: { mode: 'fixed', end_of_turn_silence_ms: 500 },
      max_call_seconds: 60,
    },
    call: { id: 'call_tools_1', direction: 'websocket', to_number: null, variables: { customer_name: 'Sam' } },
    audio: { sample_rate: 16000 },
  } as unknown as RuntimeConfig;
  cloud.chatScript = [
    { toolCalls: [{ id: 'call_p', name: 'record_promise', arguments: '{"amount":40}' }] },
    { text: 'Your reference is PTP-1042. Goodbye.', endCall: true },
  ];
  const settings = loadSettings({
    SERVICE_CONFIG_URL: 'http://127.0.0.1:9/api/v1/config',
    WORKER_AUTH_TOKEN: 'call-tools-test-token-0123456789',
    OPENAI_API_KEY: 'sk-local',
    OPENAI_BASE_URL: `${cloud.url}/v1`,
    PROVIDER_TIMEOUT_MS: '3000',
    TOOLS_ALLOW_PRIVATE_ADDRESSES: 'true',
  });
  const events: CallEvent[] = [];
  const logs: string[] = [];
  const session = new CallSession(cfg, await createProviders(cfg, settings), {
    report: (_id, e) => events.push(e),
    storage: null,
    metrics: createMetrics(false),
    logger: createLogger('info', { write: (s: string) => logs.push(s) } as unknown as NodeJS.WritableStream),
    sampleRate: 16000,
    recordingDir: dir,
  });
  const caller = new Caller();
  await session.start(caller);
  await caller.stream(silence(300));
  await caller.stream(speech('how much'));
  await caller.stream(silence(900));
  await caller.until(() => caller.messages.some((m) => m.type === 'ended'));
  const result = await session.done;

  expect(result.reason).toBe('bot_hangup');
  expect(received).toHaveLength(1);
  const req = received[0]!;
  expect(JSON.parse(req.body)).toEqual({
    tool: 'record_promise',
    arguments: { amount: 40 },
    call: { call_id: 'call_tools_1', bot_id: 'bot_tools', direction: 'websocket', to_number: null, from_number: null, variables: { customer_name: 'Sam' } },
  });
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-voice-signature']))!;
  expect(v1).toBe(createHmac('sha256', SECRET).update(`${t}.${req.body}`).digest('hex'));
  expect(caller.messages).toContainEqual({ type: 'transcript', role: 'bot', text: 'Your reference is PTP-1042.', final: true });
  expect(cloud.chats[1]!.messages.slice(-2)).toEqual([
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_p', type: 'function', function: { name: 'record_promise', arguments: '{"amount":40}' } }] },
    { role: 'tool', tool_call_id: 'call_p', content: '{"reference":"PTP-1042"}' },
  ]);
  const end = events.find((e) => e.end_reason) as CallEvent & { actions?: unknown[] };
  expect(end.actions).toEqual([
    { type: 'tool', name: 'record_promise', at: expect.any(String), duration_ms: expect.any(Number), status: 'ok', arguments: { amount: 40 }, result: '{"reference":"PTP-1042"}', error: null },
  ]);
  // Header values and the secret are never logged.
  expect(logs.join('')).not.toMatch(/Bearer crm|whsec_call_tools/);
  expect(logs.join('')).toContain('tool ran');
});
