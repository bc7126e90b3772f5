// The worker as a process (dist/main.js): boot refusal on bad settings, and SIGTERM drain — no new
// calls, the active call finishes, exit 0.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, LOG_LINE_SHAPE, logLineShape, parseLogLines, saveLogs, waitUntil, startProcess } from '@voice-platform/tests/infra';
import { silence, speech } from '../testing/audio.js';
import { callUntil, createPolicyBot } from '../testing/backend.js';
import { TestCaller, withTestCallToken } from '../testing/client.js';
import { workerMain as main, workerProcessEnv } from '../testing/worker.js';

describe('worker process', () => {
  it('refuses to boot and names every bad setting', () => {
    const r = spawnSync(process.execPath, [main], { env: { PATH: process.env.PATH, MAX_CONCURRENT_CALLS: 'lots', WORKER_AUTH_TOKEN: 'x' }, encoding: 'utf8' });
    saveLogs('worker-refused-boot', r.stdout + r.stderr);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('SERVICE_CONFIG_URL is required');
    expect(r.stderr).toContain('MAX_CONCURRENT_CALLS');
    expect(r.stderr).toContain('WORKER_AUTH_TOKEN');
    expect(r.stderr).not.toContain('"x"');
  });

  it('drains on SIGTERM: refuses new calls, lets the active call finish, exits 0', async () => {
    const bot = await createPolicyBot({ name: 'drain' });
    const port = await freePort();
    const proc = startProcess('worker', process.execPath, [main], {
      env: workerProcessEnv(port, { WORKER_ID: 'drain-test-worker', DRAIN_TIMEOUT_MS: '60000', DIALOUT_ENABLED: 'false' }),
      logFile: path.join(process.env.VP_TEST_DIR!, `worker-drain-${port}.log`),
    });
    try {
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200, { what: 'worker', proc });
      const caller = new TestCaller(withTestCallToken(`ws://127.0.0.1:${port}/ws/${bot}`));
      await caller.opened;
      caller.send({ type: 'start', variables: { customer_name: 'Sam' } });
      const started = await caller.until(() => caller.message('started'), 'started');

      process.kill(proc.pid, 'SIGTERM');
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 503, { what: 'draining health', proc });
      const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
      expect(health).toMatchObject({ status: 'draining', draining: true, active_calls: 1 });
      const live = await fetch(`http://127.0.0.1:${port}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'alive', draining: true });

      const late = new TestCaller(withTestCallToken(`ws://127.0.0.1:${port}/ws/${bot}`));
      expect(await late.closed).toBe(4503);
      expect(late.messages).toEqual([{ type: 'error', code: 'worker_draining', message: 'this worker is shutting down' }]);

      // The active call goes on as normal until the caller ends it.
      await caller.stream(speech('stop calling'));
      await caller.stream(silence(800));
      await caller.closed;
      expect(caller.message('ended')).toEqual({ type: 'ended', reason: 'bot_hangup' });
      expect(await proc.exited).toBe(0);
      const rec = await callUntil(started.call_id as string, (c) => c.status === 'completed', 'completed');
      expect(rec.end_reason).toBe('bot_hangup');
      // The format the backend's and the operator's first lines have too (their main.test).
      const [first] = parseLogLines(readFileSync(proc.logFile, 'utf8'));
      expect(logLineShape(first!)).toEqual(LOG_LINE_SHAPE);
      expect(first!.service).toBe('worker');
    } finally {
      await proc.stop();
    }
  });
});
