// The launcher itself: interrupted runs leave nothing behind, and the `make up` stack starts, is
// idempotent, and `make down` stops exactly what it started.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { keepLogs, newLogFolder } from './logs.js';
import { alive, freePort, redisPing, tcpOpen, waitUntil } from './process.js';
import { mongoPing } from './services.js';
import { parseEnvFile, repoRoot } from './versions.js';

const run = promisify(execFile);

describe('test environment', () => {
  it('is cleaned up by the guardian when the test process is killed', async () => {
    const launcher = path.join(repoRoot, 'tests', 'dist', 'infra', 'src', 'index.js');
    const script = `
      const m = await import(${JSON.stringify(launcher)});
      const env = await m.startTestEnv(['redis']);
      const pid = env.services.redis.processes()[0].pid;
      console.log(JSON.stringify({ dir: env.dir, url: env.env.REDIS_URL, pid }));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`launcher exited ${code}`)));
    });
    const { dir, url, pid } = JSON.parse(line) as { dir: string; url: string; pid: number };
    const port = Number(new URL(url).port);
    expect(await redisPing(port)).toBe(true);

    child.kill('SIGKILL');
    await waitUntil(() => !alive(pid) && !existsSync(dir), { what: 'guardian cleanup', timeoutMs: 20_000 });
    await expect(redisPing(port)).rejects.toThrow();
  });
});

describe('make up / make down', () => {
  const runDir = mkdtempSync(path.join(tmpdir(), 'vp-stack-'));
  let ports: Record<string, number>;
  let env: NodeJS.ProcessEnv;
  afterAll(async () => {
    await run('make', ['down'], { cwd: repoRoot, env }).catch(() => undefined);
    keepLogs(runDir, newLogFolder('stack')); // the stack's logs, for the secrets check after `make test`
    rmSync(runDir, { recursive: true, force: true });
  });

  it('starts the stack, is harmless twice, and stops exactly what it started', async () => {
    ports = {
      ferretdb: await freePort(),
      ferretdbDebug: await freePort(),
      redis: await freePort(),
      minio: await freePort(),
      minioConsole: await freePort(),
      livekit: await freePort(),
      livekitUdp: await freePort(),
      livekitRedis: await freePort(),
      sip: await freePort(),
      sipHealth: await freePort(),
      rtpStart: 30000 + Math.floor(Math.random() * 100) * 200,
      phone: await freePort(),
      phoneMedia: await freePort(),
      phoneControl: await freePort(),
      backend: await freePort(),
      worker: await freePort(),
      console: await freePort(),
      crm: await freePort(),
      jaegerOtlpGrpc: await freePort(),
      jaegerOtlpHttp: await freePort(),
      jaegerQuery: await freePort(),
      jaegerQueryGrpc: await freePort(),
    };
    // With the trace collector (`make up TRACING=1`): started, stopped and on loopback like the rest.
    env = { ...process.env, VP_RUN_DIR: runDir, VP_STACK_PORTS: JSON.stringify(ports), TRACING: '1' };

    const first = await run('make', ['up'], { cwd: repoRoot, env, maxBuffer: 16 << 20 });
    expect(first.stdout).toContain(`starting ferretdb on ${ports.ferretdb}`);
    expect(first.stdout).toContain(`starting jaeger on ${ports.jaegerQuery}`);
    expect(first.stdout).toMatch(new RegExp(`jaeger +http://127\\.0\\.0\\.1:${ports.jaegerQuery} `));
    expect((await fetch(`http://127.0.0.1:${ports.jaegerQuery}/api/services`)).status).toBe(200);
    expect(await mongoPing(`mongodb://127.0.0.1:${ports.ferretdb}/`)).toBe(true);
    expect(await redisPing(ports.redis!)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${ports.minio}/minio/health/ready`)).status).toBe(200);
    const health = await fetch(`http://127.0.0.1:${ports.backend}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', checks: { mongodb: 'ok', redis: 'ok' } });
    // make up seeds the admin from the settings it used (.env, else .env.example).
    const envFile = existsSync(path.join(repoRoot, '.env')) ? '.env' : '.env.example';
    const settings = parseEnvFile(readFileSync(path.join(repoRoot, envFile), 'utf8'));
    const login = await fetch(`http://127.0.0.1:${ports.backend}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: settings.ADMIN_EMAIL, password: settings.ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    // Loopback only: on the machine's other addresses nothing of the stack answers.
    const outside = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (outside) {
      for (const port of [ports.backend, ports.worker, ports.console, ports.livekit, ports.minio, ports.redis, ports.ferretdb, ports.jaegerQuery, ports.jaegerOtlpHttp, ports.jaegerOtlpGrpc]) {
        expect([port, await tcpOpen(port!, outside)]).toEqual([port, false]);
      }
    }
    const worker = await fetch(`http://127.0.0.1:${ports.worker}/health`);
    expect(await worker.json()).toMatchObject({ status: 'ok', active_calls: 0, max_calls: 30, draining: false });
    // The worker's heartbeat reached the stack's Redis: the backend sees one live worker.
    const fleet = await fetch(`http://127.0.0.1:${ports.worker}/health/fleet`);
    expect(((await fleet.json()) as { workers: unknown[] }).workers).toHaveLength(1);
    // The running worker's environment has its own settings and none of the backend's secrets.
    const workerPids = readFileSync(path.join(runDir, 'pids', 'worker.pids'), 'utf8').split('\n').filter(Boolean);
    expect(workerPids).toHaveLength(1);
    const workerEnvNames = readFileSync(`/proc/${workerPids[0]}/environ`, 'utf8').split('\0').map((e) => e.slice(0, e.indexOf('=')));
    expect(workerEnvNames).toEqual(expect.arrayContaining(['WORKER_AUTH_TOKEN', 'SERVICE_CONFIG_URL', 'LIVEKIT_API_SECRET']));
    expect(workerEnvNames.filter((n) => ['ADMIN_PASSWORD', 'JWT_SECRET', 'ADMIN_EMAIL', 'MONGODB_URI'].includes(n))).toEqual([]);
    // Tracing on: the parts are pointed at the stack's collector.
    expect(readFileSync(`/proc/${workerPids[0]}/environ`, 'utf8').split('\0')).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:${ports.jaegerOtlpHttp}`);

    // The console: the production build, and deep links fall back to the app's index.html.
    for (const route of ['/', '/bots/some-bot-id']) {
      const page = await fetch(`http://127.0.0.1:${ports.console}${route}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await page.text()).toContain('<vp-app></vp-app>');
      // The Content-Security-Policy lets the page reach the API it was built for (VITE_API_URL) and the stack's LiveKit.
      expect(page.headers.get('content-security-policy')).toMatch(new RegExp(`connect-src 'self' http://127\\.0\\.0\\.1:[0-9]+ ws://127\\.0\\.0\\.1:${ports.livekit} http://127\\.0\\.0\\.1:${ports.livekit};`));
    }
    expect((await fetch(`http://127.0.0.1:${ports.console}/assets/missing.js`)).status).toBe(404);

    // The README's dial-out: the seeded trunk reaches the local test phone, which answers, says its
    // phrase, and the demo bot says goodbye and hangs up; the call is recorded.
    const auth = { Authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`, 'Content-Type': 'application/json' };
    const trunks = (await (await fetch(`http://127.0.0.1:${ports.backend}/api/v1/sip/outbound-trunks`, { headers: auth })).json()) as { items: Array<Record<string, unknown>> };
    expect(trunks.items).toEqual([expect.objectContaining({ address: `127.0.0.1:${ports.phone}`, numbers: ['+15550100000'], default: true, has_password: false })]);
    const key = (await (await fetch(`http://127.0.0.1:${ports.backend}/api/v1/api-keys`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'readme' }) })).json()) as { key: string };
    const dial = await fetch(`http://127.0.0.1:${ports.backend}/api/v1/sip/dialout`, {
      method: 'POST',
      headers: { 'X-API-Key': key.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ bot_id: 'demo-bot', to_number: '+15005550100', variables: { customer_name: 'Ada', amount_due: '42 dollars' } }),
    });
    expect(dial.status).toBe(201);
    const callId = ((await dial.json()) as { call_id: string }).call_id;
    let call: Record<string, unknown> = {};
    await waitUntil(
      async () => {
        call = (await (await fetch(`http://127.0.0.1:${ports.backend}/api/v1/calls/${callId}`, { headers: { 'X-API-Key': key.key } })).json()) as Record<string, unknown>;
        return call.recording_key !== null && call.ended_at !== null;
      },
      { what: 'the README dial-out to end with a recording', timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(call).toMatchObject({ status: 'completed', end_reason: 'bot_hangup', from_number: '+15550100000', recording_error: null });
    expect(Object.keys(call.status_times as object).sort()).toEqual(['completed', 'dialing', 'in_progress', 'queued', 'ringing']);
    expect((call.transcript as Array<{ role: string; text: string }>)[0]).toEqual(expect.objectContaining({ role: 'bot', text: 'Hello Ada, this is a friendly reminder from Example Company.' }));
    // "Yes, I will pay": the demo bot records the promise in the stack's CRM through its signed HTTP tool and
    // speaks the reference the CRM answered; the call lists the action.
    expect((call.transcript as Array<{ role: string; text: string }>).map((t) => t.text)).toContain('Thank you Ada, your promise is noted under reference PTP-1001.');
    expect(call.actions).toEqual([expect.objectContaining({ type: 'tool', name: 'record_promise', status: 'ok', arguments: { customer_name: 'Ada', amount_due: '42 dollars' }, result: '{"reference":"PTP-1001","recorded":true}' })]);
    const promises = (await (await fetch(`http://127.0.0.1:${ports.crm}/promises`)).json()) as { items: Array<Record<string, unknown>> };
    expect(promises.items).toEqual([expect.objectContaining({ reference: 'PTP-1001', call_id: callId })]);

    // The README's call-in: the local phone calls the seeded inbound number through livekit-sip; LiveKit's
    // webhook reaches the backend, the worker answers with the demo bot, which hangs up after "yes i will pay".
    const numbers = (await (await fetch(`http://127.0.0.1:${ports.backend}/api/v1/sip/inbound-numbers`, { headers: auth })).json()) as { items: Array<Record<string, unknown>> };
    expect(numbers.items).toEqual([expect.objectContaining({ number: '+15550100200', bot_id: 'demo-bot' })]);
    const callIn = await run('make', ['call-in'], { cwd: repoRoot, env, maxBuffer: 16 << 20 });
    expect(callIn.stdout).toContain('==> answered; the bot hung up');
    expect(callIn.stdout).toMatch(/==> call [0-9a-f]{24}: completed \/ bot_hangup, \+15550109999 → \+15550100200/);
    expect(callIn.stdout).toContain('bot  Thank you caller, your promise is noted under reference PTP-1002.');
    expect(callIn.stdout).toMatch(/action record_promise ok \([0-9]+ ms\) → \{"reference":"PTP-1002","recorded":true\}/);

    const second = await run('make', ['up'], { cwd: repoRoot, env, maxBuffer: 16 << 20 });
    expect(second.stdout).toContain('ferretdb already running');
    expect(second.stdout).toContain('jaeger already running');
    expect(second.stdout).toContain('redis already running');
    expect(second.stdout).toContain('minio already running');
    expect(second.stdout).toContain('livekit already running');
    expect(second.stdout).toContain('phone already running');
    expect(second.stdout).toContain('backend already running');
    expect(second.stdout).toContain('worker already running');
    expect(second.stdout).toContain('console already running');
    expect(second.stdout).toContain('seed: inbound number +15550100200 present, unchanged');
    expect(second.stdout).toContain('crm already running');
    expect(second.stdout).toContain('seed: demo bot tool secret present, unchanged');

    // The suite's own Redis is not the stack's: make down must leave it alone.
    const outsider = Number(new URL(process.env.REDIS_URL!).port);
    await run('make', ['down'], { cwd: repoRoot, env });
    expect(await redisPing(outsider)).toBe(true);
    for (const [name, port] of Object.entries(ports)) {
      if (name === 'rtpStart') continue;
      const server = await import('node:net').then((net) => net.createServer());
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      });
    }
    // Stopped and started again, the stack keeps what the backend mirrored into LiveKit: the seeded
    // inbound number still answers (its dispatch rule lives in LiveKit's Redis, kept on disk).
    await run('make', ['up'], { cwd: repoRoot, env, maxBuffer: 16 << 20 });
    const again = await run('make', ['call-in'], { cwd: repoRoot, env, maxBuffer: 16 << 20 });
    expect(again.stdout).toContain('==> answered; the bot hung up');
    await run('make', ['down'], { cwd: repoRoot, env });
    const { stdout } = await run('pgrep', ['-f', runDir]).catch(() => ({ stdout: '' }));
    expect(stdout.trim()).toBe('');
  }, 300_000);
});
