// The bot-test caller (docs/design.md §17): a WebSocket test call to a voice worker, as a browser's would be
// (a test-call token signed with the worker token, `WS /ws/{bot_id}`), that speaks a case's script with the
// offline voice (schemas/node espeak-ng) in real time and keeps the line open with silence between lines, so
// the worker's VAD hears each line end. The token names the run and case: the worker's call answers its tools
// with that case's mocks (runtime config).
import { setTimeout as delay } from 'node:timers/promises';
import WebSocket from 'ws';
import { signTestCallToken } from '@voice-platform/schemas/test-call-token';
import { speechBytes } from '@voice-platform/schemas/node';
import type { TestScriptStep } from '@voice-platform/schemas';

const RATE_HZ = 16_000;
const FRAME_MS = 20;
const FRAME_BYTES = (RATE_HZ * FRAME_MS * 2) / 1000;
/** The bot has finished a line when its audio has stopped this long. */
const BOT_QUIET_MS = 900;
/** Longest wait for the bot to speak and finish (a step with wait_for_bot). */
const BOT_TURN_WAIT_MS = 25_000;
/** After the script: how long the bot has to end the call before the caller hangs up. */
const END_WAIT_MS = 20_000;
/** Worker refusals that mean "no room now": the case waits, it does not fail. */
const NO_CAPACITY_CODES = new Set(['worker_at_capacity', 'worker_draining', 'fleet_at_capacity']);

export type CallerOutcome = { kind: 'called'; callId: string } | { kind: 'no_capacity'; reason: string } | { kind: 'error'; reason: string };

export interface ScriptedCallOptions {
  workerUrl: string;
  workerToken: string;
  botId: string;
  runId: string;
  caseId: string;
  variables: Record<string, string>;
  script: TestScriptStep[];
  /** Told the call's id as soon as the worker has created it. */
  onStarted?: (callId: string) => void | Promise<void>;
  signal?: AbortSignal;
}

export async function runScriptedCall(o: ScriptedCallOptions): Promise<CallerOutcome> {
  const base = new URL(o.workerUrl);
  base.protocol = base.protocol === 'https:' || base.protocol === 'wss:' ? 'wss:' : 'ws:';
  const { token } = signTestCallToken(o.workerToken, { bot_id: o.botId, sub: `test_run:${o.runId}`, ttlSeconds: 300, test: { run_id: o.runId, case_id: o.caseId } });
  const url = new URL(`/ws/${encodeURIComponent(o.botId)}`, base);
  url.searchParams.set('token', token);

  const ws = new WebSocket(url);
  let callId: string | null = null;
  let refused: { code: string; message: string } | null = null;
  let closed = false;
  let lastBotAudioAt = 0;
  let botAudioFrames = 0;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      lastBotAudioAt = performance.now();
      botAudioFrames++;
      return;
    }
    const msg = JSON.parse(data.toString()) as { type?: string; call_id?: string; code?: string; message?: string };
    if (msg.type === 'started' && typeof msg.call_id === 'string') callId = msg.call_id;
    if (msg.type === 'error' && typeof msg.code === 'string') refused = { code: msg.code, message: msg.message ?? '' };
  });
  const closedP = new Promise<void>((resolve) => ws.once('close', () => ((closed = true), resolve())));
  const opened = await new Promise<Error | null>((resolve) => {
    ws.once('open', () => resolve(null));
    ws.once('error', (err) => resolve(err));
  });
  ws.on('error', () => undefined);
  if (opened) return { kind: 'no_capacity', reason: `no voice worker answers at ${base.host}: ${opened.message}` };

  // The start message first: audio before it would start the call without the case's variables.
  ws.send(JSON.stringify({ type: 'start', variables: o.variables }));
  // The outgoing audio: queued speech, else silence, one 20 ms frame per tick in real time.
  let queue = Buffer.alloc(0);
  const silenceFrame = Buffer.alloc(FRAME_BYTES);
  let pumping = true;
  const pump = (async () => {
    const start = performance.now();
    for (let k = 0; pumping && ws.readyState === WebSocket.OPEN; k++) {
      const frame = queue.length ? queue.subarray(0, FRAME_BYTES) : silenceFrame;
      queue = queue.subarray(frame.length);
      ws.send(frame.length === FRAME_BYTES ? frame : Buffer.concat([frame, Buffer.alloc(FRAME_BYTES - frame.length)]));
      const wait = start + (k + 1) * FRAME_MS - performance.now();
      if (wait > 0) await delay(wait);
    }
  })();
  const until = async (cond: () => boolean, ms: number) => {
    const deadline = performance.now() + ms;
    while (!cond() && !closed && performance.now() < deadline && !o.signal?.aborted) await delay(50);
    return cond();
  };

  try {
    await until(() => callId !== null || refused !== null, 15_000);
    if (!callId) {
      const r = refused as { code: string; message: string } | null;
      if (r && NO_CAPACITY_CODES.has(r.code)) return { kind: 'no_capacity', reason: `${r.code}: ${r.message}` };
      return { kind: 'error', reason: r ? `the worker refused the call: ${r.code}: ${r.message}` : 'the worker did not start the call' };
    }
    await o.onStarted?.(callId);
    let heardFrom = 0; // bot frames heard before the current step's wait
    for (const step of o.script) {
      if (closed || o.signal?.aborted) break;
      if (step.wait_for_bot) {
        const seen = heardFrom;
        await until(() => botAudioFrames > seen && performance.now() - lastBotAudioAt >= BOT_QUIET_MS, BOT_TURN_WAIT_MS);
      }
      if (step.after_ms) await delay(step.after_ms);
      if (closed) break;
      if ('say' in step) {
        queue = Buffer.concat([queue, speechBytes(step.say, RATE_HZ)]);
        await until(() => queue.length === 0, 60_000);
      } else {
        ws.send(JSON.stringify({ type: 'dtmf', digits: step.dtmf }));
      }
      heardFrom = botAudioFrames;
    }
    // The bot ends the call (an expectation may say how); else the caller hangs up.
    await until(() => closed, END_WAIT_MS);
    if (!closed) ws.send(JSON.stringify({ type: 'stop' }));
    return { kind: 'called', callId };
  } finally {
    pumping = false;
    await pump.catch(() => undefined);
    if (!closed) {
      ws.close(1000);
      await Promise.race([closedP, delay(3000)]);
    }
  }
}
