// The worker as a process (dist/main.js) under hostile WebSocket clients: oversized frames, odd-length
// PCM, garbage text, floods of start messages, messages right behind the start, connect/disconnect
// churn and more callers than slots. After each abuse the worker still answers /health with 200 (polled
// throughout), every call slot is free again (/health and the voice_worker_active_calls gauge), no
// provider process is left behind, and memory comes back near where it started: after a full garbage
// collection (through the inspector: the process runs with --inspect on loopback, a test-only flag) the
// JS heap within 16 MB and the process's own VmRSS within 64 MB of the baseline taken after a warm-up call.
// Each abuse gets the protocol's answer (docs/design.md §4): an {"type":"error"} message and close 4400
// (invalid_message), 4422 (variables_mismatch) or 4503 (worker_at_capacity); frames over the worker's
// 1 MiB maxPayload get the WebSocket close 1009 (message too big), text that is not UTF-8 gets 1007.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { freePort, startProcess, waitUntil, type ManagedProcess } from '@voice-platform/tests/infra';
import { pcmToBytes } from './audio/pcm.js';
import { MAX_INVALID_MESSAGES } from './transports/websocket.js';
import { silence, speech } from '../testing/audio.js';
import { adminAuth, backendUrl, callUntil, createBot, createPolicyBot } from '../testing/backend.js';
import { TestCaller, withTestCallToken, type ServerMsg } from '../testing/client.js';
import { workerMain, workerProcessEnv } from '../testing/worker.js';

const MB = 1 << 20;
const MAX_CALLS = 20;
/** How far above their settled start the worker's RSS and (garbage-collected) JS heap may stay after an abuse. */
const RSS_SLACK = 64 * MB;
const HEAP_SLACK = 16 * MB;

let proc: ManagedProcess;
let base: string;
let wsBase: string;
let inspectPort: number;
let quietBot: string;
let talkerBot: string;
let baselineRss = 0;
let baselineHeap = 0;
let baselineChildren = 0;

// ---- the worker process, seen from outside ----

async function health(): Promise<{ status: string; active_calls: number; max_calls: number }> {
  const res = await fetch(`${base}/health`);
  if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
  return (await res.json()) as { status: string; active_calls: number; max_calls: number };
}

async function gauge(name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`${name} missing from /metrics`);
  return Number(line.slice(name.length + 1));
}

function rss(): number {
  const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!kb) throw new Error('no VmRSS');
  return Number(kb[1]) * 1024;
}

/** Every process below the worker (its spawner, and espeak-ng / pocketsphinx / the live decoder under it). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [pid, pp] of parent) if (pp === p) out.push(pid), walk(pid);
  };
  walk(root);
  return out;
}

/** Calls a DevTools-protocol method in the worker (the process runs with --inspect on loopback; tests only). */
async function inspect<T>(method: string): Promise<T> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return await new Promise<T>((resolve, reject) => {
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString()) as { id?: number; error?: unknown; result?: T };
        if (msg.id !== 1) return;
        if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result as T);
      });
      ws.send(JSON.stringify({ id: 1, method }));
    });
  } finally {
    ws.close();
  }
}

/** A full garbage collection in the worker, then its JS heap in use. */
async function collectGarbage(): Promise<number> {
  await inspect('HeapProfiler.collectGarbage');
  return (await inspect<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize;
}

/** Polls /health while an abuse runs: every answer must be a 200. */
function watchHealth(): { stop(): Promise<string[]> } {
  const problems: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5000) });
        if (res.status !== 200) problems.push(`/health answered ${res.status}`);
        await res.arrayBuffer();
      } catch (err) {
        problems.push(`/health failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return problems;
    },
  };
}

/** After an abuse: alive, 200, no slot held, no provider process left, memory back near the start. */
async function expectSettled(what: string): Promise<void> {
  expect(proc.isRunning()).toBe(true);
  await waitUntil(async () => (await health()).active_calls === 0 && (await gauge('voice_worker_active_calls')) === 0, {
    what: `${what}: every call slot free again`,
    timeoutMs: 30_000,
    proc,
  });
  await waitUntil(() => descendants(proc.pid).length <= baselineChildren, { what: `${what}: provider processes gone`, timeoutMs: 30_000, proc });
  // Memory: garbage collected, the JS heap in use and the process's RSS come back near the baseline.
  let heap = 0;
  let resident = 0;
  await waitUntil(
    async () => {
      heap = await collectGarbage();
      resident = rss();
      return heap <= baselineHeap + HEAP_SLACK && resident <= baselineRss + RSS_SLACK;
    },
    { what: `${what}: memory settled`, timeoutMs: 30_000, intervalMs: 500, proc },
  ).catch((err: Error) => {
    const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
    throw new Error(`${err.message}: heap ${mb(heap)} (baseline ${mb(baselineHeap)}, slack ${mb(HEAP_SLACK)}), RSS ${mb(resident)} (baseline ${mb(baselineRss)}, slack ${mb(RSS_SLACK)})`);
  });
  expect((await health()).status).toBe('ok');
}

/** Runs an abuse with /health watched throughout, then checks the worker settled. */
async function abuse(what: string, fn: () => Promise<void>): Promise<void> {
  const watch = watchHealth();
  try {
    await fn();
  } finally {
    expect(await watch.stop()).toEqual([]);
  }
  await expectSettled(what);
}

const errors = (c: TestCaller): ServerMsg[] => c.messages.filter((m) => m.type === 'error');

async function started(botId = quietBot, variables: Record<string, string> = {}): Promise<{ caller: TestCaller; callId: string }> {
  const caller = new TestCaller(withTestCallToken(`${wsBase}/ws/${botId}`));
  await caller.opened;
  caller.send({ type: 'start', variables });
  const msg = await caller.until(() => caller.message('started') ?? caller.message('error'), 'started');
  if (msg.type !== 'started') throw new Error(`call refused: ${JSON.stringify(msg)}`);
  return { caller, callId: msg.call_id as string };
}

async function callsOf(botId: string): Promise<Array<{ call_id: string; status: string; end_reason: string | null }>> {
  const out: Array<{ call_id: string; status: string; end_reason: string | null }> = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ bot_id: botId, limit: '100', ...(cursor ? { cursor } : {}) });
    const res = await fetch(`${backendUrl()}/api/v1/calls?${q}`, { headers: { Authorization: await adminAuth() } });
    const body = (await res.json()) as { items: Array<{ call_id: string; status: string; end_reason: string | null }>; next_cursor: string | null };
    out.push(...body.items);
    cursor = body.next_cursor;
  } while (cursor);
  return out;
}

beforeAll(async () => {
  quietBot = await createBot({ name: 'abuse-quiet', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
  talkerBot = await createPolicyBot({ name: 'abuse-talker' });
  const port = await freePort();
  inspectPort = await freePort();
  proc = startProcess('worker', process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, workerMain], {
    env: workerProcessEnv(port, {
      WORKER_ID: `abuse-test-worker-${port}`,
      MAX_CONCURRENT_CALLS: String(MAX_CALLS),
      // Every slot for the WebSocket abuse (no share kept back for dial-outs, which this worker does not take).
      TEST_CALL_SHARE: '1',
      DRAIN_TIMEOUT_MS: '5000',
      DIALOUT_ENABLED: 'false',
    }),
    logFile: path.join(process.env.VP_TEST_DIR!, `worker-abuse-${port}.log`),
  });
  base = `http://127.0.0.1:${port}`;
  wsBase = `ws://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${base}/health`)).status === 200, { what: 'worker', proc });
  // One ordinary call first, so what the first call loads once (code, the VAD's wasm, the pronunciation
  // dictionary its policy grammar is built from) is in the baseline.
  const { caller } = await started(talkerBot, { customer_name: 'Sam' });
  caller.send({ type: 'stop' });
  await caller.closed;
  await waitUntil(async () => (await health()).active_calls === 0, { what: 'warm-up call ended', proc });
  // The spawner and the live decoders' process (stt/live-decoder.ts), which stays for the next call.
  await waitUntil(() => descendants(proc.pid).length <= 2, { what: 'only the spawner and the live decoder left', proc });
  baselineChildren = descendants(proc.pid).length;
  baselineHeap = await collectGarbage();
  baselineRss = rss();
});

afterAll(async () => {
  await proc?.stop();
});

describe('a worker under abuse', () => {
  it('refuses a 10 MB binary frame with close 1009, before and during a call', async () => {
    await abuse('10 MB frames', async () => {
      const early = new TestCaller(withTestCallToken(`${wsBase}/ws/${quietBot}`));
      await early.opened;
      early.ws.send(Buffer.alloc(10 * MB, 1));
      expect(await early.closed).toBe(1009);
      expect(early.audio).toEqual([]);

      const { caller, callId } = await started();
      caller.ws.send(Buffer.alloc(10 * MB, 1));
      expect(await caller.closed).toBe(1009);
      const call = await callUntil(callId, (c) => c.status === 'completed', 'the call to end');
      expect(call.end_reason).toBe('connection_error');
    });
  });

  it('hears speech sent as odd-length PCM frames (a byte split across frames is carried over)', async () => {
    await abuse('odd-length PCM', async () => {
      const { caller, callId } = await started(talkerBot, { customer_name: 'Sam' });
      // An odd first frame and a lone byte, then 641-byte frames (20 ms and a half sample each), in real time.
      const bytes = pcmToBytes(new Int16Array([...silence(300), ...speech('stop calling'), ...silence(900)]));
      const sizes = [3, 1, 0, 641];
      for (let at = 0, k = 0; at < bytes.length && caller.ws.readyState === WebSocket.OPEN; k++) {
        const n = sizes[Math.min(k, sizes.length - 1)]!;
        caller.ws.send(bytes.subarray(at, at + n));
        at += n;
        if (n > 100) await new Promise((r) => setTimeout(r, 20));
      }
      await caller.until(() => caller.closeCode !== null, 'the call to end', 20_000);
      expect(errors(caller)).toEqual([]);
      expect(caller.message('transcript', (m) => m.role === 'user')).toEqual({ type: 'transcript', role: 'user', text: 'stop calling', final: true });
      expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'bot_hangup' });
      expect(caller.closeCode).toBe(1000);
      await callUntil(callId, (c) => c.status === 'completed' && c.end_reason === 'bot_hangup', 'completed');
    });
  });

  it('answers garbage text with invalid_message: 4400 as the first message, an error (the call goes on) mid-call', async () => {
    await abuse('garbage text', async () => {
      const huge = 'x'.repeat(900_000); // under the 1 MiB frame limit
      const bad = [
        'hello',
        '{',
        '',
        '[]',
        'null',
        '42',
        '"start"',
        '{}',
        '{"type":"START"}',
        '{"type":["start"]}',
        '{"type":{"$ne":null}}',
        '{"type":"start","variables":[]}',
        '{"type":"start","variables":"x"}',
        '{"type":"start","variables":{"a":1}}',
        '{"type":"start","variables":{"a":null}}',
        '{"type":"start","variables":{"a":{"b":"c"}}}',
        '{"type":"start","variables":{"bad name":"x"}}',
        JSON.stringify({ type: 'start', variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])) }),
        JSON.stringify({ type: 'start', variables: { customer_name: 'x'.repeat(4001) } }),
        JSON.stringify({ type: 'start', variables: { customer_name: huge } }),
        huge,
        JSON.stringify(huge),
      ];
      for (const text of bad) {
        const c = new TestCaller(withTestCallToken(`${wsBase}/ws/${talkerBot}`));
        await c.opened;
        c.ws.send(text);
        const code = await c.closed;
        expect({ text: text.slice(0, 60), code, messages: c.messages.map((m) => m.code) }).toEqual({ text: text.slice(0, 60), code: 4400, messages: ['invalid_message'] });
      }
      // Well-formed, but not this bot's variables: the backend's answer, as for any caller.
      const stranger = new TestCaller(withTestCallToken(`${wsBase}/ws/${talkerBot}`));
      await stranger.opened;
      stranger.send({ type: 'start', variables: { customer_name: 'Sam', nickname: 'x' } });
      expect(await stranger.closed).toBe(4422);
      expect(stranger.messages.map((m) => m.code)).toEqual(['variables_mismatch']);

      // Frames the WebSocket layer refuses: text over the frame limit, and text that is not UTF-8.
      const big = new TestCaller(withTestCallToken(`${wsBase}/ws/${talkerBot}`));
      await big.opened;
      big.ws.send('x'.repeat(2 * MB));
      expect(await big.closed).toBe(1009);
      const binaryAsText = new TestCaller(withTestCallToken(`${wsBase}/ws/${talkerBot}`));
      await binaryAsText.opened;
      binaryAsText.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
      expect(await binaryAsText.closed).toBe(1007);

      // Mid-call: each bad message gets an error, the call goes on; `stop` still ends it.
      const { caller, callId } = await started(talkerBot, { customer_name: 'Sam' });
      const midCall = ['hello', '[]', '{"type":"start","variables":{}}', huge, '{"type":"stop"'];
      for (const text of midCall) caller.ws.send(text);
      await caller.until(() => errors(caller).length === midCall.length, 'an error for each bad message');
      expect(errors(caller).map((m) => m.code)).toEqual(midCall.map(() => 'invalid_message'));
      expect(caller.message('ended')).toBeUndefined();
      caller.send({ type: 'stop' });
      expect(await caller.closed).toBe(1000);
      expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'caller_hangup' });
      await callUntil(callId, (c) => c.status === 'completed' && c.end_reason === 'caller_hangup', 'completed');
    });
  });

  it('1,000 start messages on one socket: the first starts the call, the flood closes it with 4400', async () => {
    await abuse('1,000 starts', async () => {
      const floodBot = await createBot({ name: 'abuse-flood', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
      const c = new TestCaller(withTestCallToken(`${wsBase}/ws/${floodBot}`));
      await c.opened;
      const start = JSON.stringify({ type: 'start', variables: {} });
      for (let i = 0; i < 1000; i++) c.ws.send(start);
      expect(await c.closed).toBe(4400);
      // Each repeated start is an invalid message: MAX_INVALID_MESSAGES answers, then one last error and the close.
      const errs = errors(c);
      expect(errs.map((m) => m.code)).toEqual(Array.from({ length: MAX_INVALID_MESSAGES + 1 }, () => 'invalid_message'));
      expect(errs[errs.length - 1]!.message).toBe('too many invalid messages');
      // The call the first start created is over in the backend too (canceled when it had not started yet).
      await waitUntil(
        async () => {
          const calls = await callsOf(floodBot);
          return calls.length === 1 && ['completed', 'canceled'].includes(calls[0]!.status) && calls[0]!.end_reason === 'invalid_message';
        },
        { what: 'the flood call to be terminal', timeoutMs: 30_000 },
      );
    });
  });

  it('loses nothing sent right behind the start: a stop in the same write ends the call at once', async () => {
    await abuse('start and stop in one write', async () => {
      const bot = await createBot({ name: 'abuse-start-stop', greeting: '', policy: { intents: [], fallback: { reply: 'Hello.' } } });
      const c = new TestCaller(withTestCallToken(`${wsBase}/ws/${bot}`));
      await c.opened;
      // Back to back, so the worker's WebSocket layer hands both messages over in the same tick.
      c.ws.send(JSON.stringify({ type: 'start', variables: {} }));
      c.ws.send(JSON.stringify({ type: 'stop' }));
      expect(await c.closed).toBe(1000);
      expect(errors(c)).toEqual([]);
      await waitUntil(
        async () => {
          const calls = await callsOf(bot);
          return calls.length === 1 && ['canceled', 'completed'].includes(calls[0]!.status) && calls[0]!.end_reason === 'caller_hangup';
        },
        { what: 'the call to end as a hang-up', timeoutMs: 30_000 },
      );
    });
  });

  it('survives 200 connect/disconnect cycles, some before the start, some mid-start, some mid-call', async () => {
    await abuse('200 connect/disconnect cycles', async () => {
      const churnBot = await createBot({ name: 'abuse-churn', greeting: 'Hello there, this is a longer greeting that keeps the bot talking.', policy: { intents: [], fallback: { reply: 'Hello.' } } });
      const url = `${wsBase}/ws/${churnBot}`;
      const midCall: string[] = [];
      const cycle = async (i: number) => {
        const kind = i % 6;
        const c = new TestCaller(withTestCallToken(url));
        c.opened.catch(() => undefined); // kind 0 never opens
        if (kind === 0) {
          c.ws.terminate(); // before the upgrade completes
          await c.closed;
          return;
        }
        await c.opened;
        if (kind === 1) c.ws.close(); // before any message
        else if (kind === 2) c.ws.terminate(); // no close frame at all
        else {
          c.send({ type: 'start', variables: {} });
          if (kind === 3) c.ws.close(); // mid-start
          else {
            const s = await c.until(() => c.message('started') ?? c.message('error'), 'started');
            expect(s.type).toBe('started');
            midCall.push(s.call_id as string);
            if (kind === 4) c.ws.close();
            else c.ws.terminate(); // mid-call, mid-greeting, abruptly
          }
        }
        await c.closed;
      };
      for (let wave = 0; wave < 20; wave++) {
        await Promise.all(Array.from({ length: 10 }, (_, k) => cycle(wave * 10 + k)));
        // A hung-up call frees its slot once its end is reported and its recording stored; on a loaded
        // machine that can outlast a wave, and ten more calls would then meet worker_at_capacity.
        await waitUntil(async () => (await health()).active_calls === 0, { what: `wave ${wave}'s calls to end`, timeoutMs: 30_000 });
      }
      expect(midCall.length).toBeGreaterThanOrEqual(60);
      // Every call any cycle created reaches a terminal status; the ones that got going end as hang-ups.
      await waitUntil(async () => (await callsOf(churnBot)).every((c) => ['completed', 'canceled', 'failed'].includes(c.status)), {
        what: 'every churn call terminal',
        timeoutMs: 60_000,
      });
      const calls = new Map((await callsOf(churnBot)).map((c) => [c.call_id, c]));
      for (const id of midCall) expect(calls.get(id)).toMatchObject({ status: 'completed', end_reason: 'caller_hangup' });
    });
  });

  it(`runs ${MAX_CALLS} of 40 concurrent calls and refuses the rest with worker_at_capacity, close 4503`, async () => {
    await abuse('40 concurrent calls', async () => {
      const callers = Array.from({ length: 40 }, () => new TestCaller(withTestCallToken(`${wsBase}/ws/${quietBot}`)));
      try {
        await Promise.all(
          callers.map(async (c) => {
            await c.opened.catch(() => undefined);
            if (c.ws.readyState === WebSocket.OPEN) c.send({ type: 'start', variables: {} });
            await c.until(() => c.message('started') || c.closeCode !== null, 'started or refused');
          }),
        );
        const running = callers.filter((c) => c.message('started'));
        const refused = callers.filter((c) => !c.message('started'));
        expect(running.length).toBe(MAX_CALLS);
        for (const c of refused) {
          expect(await c.closed).toBe(4503);
          expect(c.messages).toEqual([{ type: 'error', code: 'worker_at_capacity', message: `this worker runs ${MAX_CALLS} calls already` }]);
        }
        expect(await health()).toMatchObject({ status: 'ok', active_calls: MAX_CALLS, max_calls: MAX_CALLS });
        expect(await gauge('voice_worker_active_calls')).toBe(MAX_CALLS);
      } finally {
        for (const c of callers) c.ws.close();
        await Promise.all(callers.map((c) => c.closed));
      }
    });
  });

  it('after all that, drains on SIGTERM and exits 0, having logged nothing fatal', async () => {
    process.kill(proc.pid, 'SIGTERM');
    expect(await proc.exited).toBe(0);
    const lines = readFileSync(proc.logFile, 'utf8').split('\n').filter(Boolean);
    const bad = lines.filter((l) => !l.startsWith('{') || ['error', 'fatal'].includes((JSON.parse(l) as { level: string }).level));
    expect(bad.filter((l) => !l.startsWith('Debugger ') && !l.startsWith('For help, see'))).toEqual([]);
  });
});
