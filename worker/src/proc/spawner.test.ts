import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { waitUntil } from '@voice-platform/tests/infra';
import { silence, speech } from '../../testing/audio.js';
import { EspeakTts } from '../tts/espeak.js';
import { PocketsphinxStt } from '../stt/pocketsphinx.js';
import { Spawner, SpawnerError, type RunHandle } from './spawner.js';

const built = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'proc', 'spawner.js');

async function output(run: RunHandle): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of run.stdout) chunks.push(c);
  return Buffer.concat(chunks);
}

/** kill(pid, 0)'s error code: 'ESRCH' once the process is gone and reaped. */
function probe(pid: number): string | null {
  try {
    process.kill(pid, 0);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'error';
  }
}

/** Gone, or dead and waiting for its adopter (init) to reap it. */
function dead(pid: number): boolean {
  if (probe(pid) === 'ESRCH') return true;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] === 'Z';
  } catch {
    return true;
  }
}

/** Runs an ESM snippet that imports the built spawner as `Spawner`. */
function script(body: string): string[] {
  return ['--input-type=module', '-e', `import { Spawner } from ${JSON.stringify(pathToFileURL(built).href)};\n${body}`];
}

describe('spawner', () => {
  let spawner: Spawner;
  let dir: string;
  beforeEach(() => {
    spawner = new Spawner();
    dir = mkdtempSync(path.join(tmpdir(), 'vp-spawner-test-'));
  });
  afterEach(async () => {
    await spawner.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs many processes at once, each with its own stdin and output', async () => {
    const inputs = Array.from({ length: 40 }, () => randomBytes(64 * 1024 + Math.floor(Math.random() * 4096)));
    const outs = await Promise.all(
      inputs.map(async (stdin) => {
        const run = spawner.run('/bin/cat', [], { stdin });
        const [out, exit] = await Promise.all([output(run), run.exited]);
        expect(exit).toMatchObject({ code: 0, signal: null, timedOut: false });
        return out;
      }),
    );
    outs.forEach((out, i) => expect(out.equals(inputs[i]!)).toBe(true));
  });

  it('passes arguments verbatim, string stdin, exit codes and stderr', async () => {
    const run = spawner.run('/bin/sh', ['-c', 'read line; printf "%s|%s" "$line" "$0"; echo oops >&2; exit 3', '--not-an-option'], { stdin: 'hello there\n' });
    expect((await output(run)).toString()).toBe('hello there|--not-an-option');
    expect(await run.exited).toEqual({ code: 3, signal: null, timedOut: false, stderr: 'oops\n' });
  });

  it('streams stdin to a piped run as it is written, and closes it on end', async () => {
    // A line-by-line echo: each answer comes back before the next line is written.
    const run = spawner.run('/bin/sh', ['-c', 'while read line; do echo "got $line"; done; echo bye'], { pipe: true });
    const reader = run.stdout[Symbol.asyncIterator]();
    for (const word of ['one', 'two']) {
      run.write(Buffer.from(`${word}\n`));
      expect((await reader.next()).value?.toString()).toBe(`got ${word}\n`);
    }
    run.end();
    expect((await reader.next()).value?.toString()).toBe('bye\n');
    expect((await run.exited).code).toBe(0);
  });

  it('does not keep the worker alive for a run started with keepAlive: false (a helper idling between calls)', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, script(`const s = new Spawner(); const r = s.run('/bin/sleep', ['30'], { pipe: true, keepAlive: false }); const keep = setInterval(() => {}, 1000); const pid = await r.started; clearInterval(keep); console.log('started', typeof pid);`), { timeout: 20_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(out).toBe('started number\n');
  });

  it('gives a run without stdin an empty one', async () => {
    const run = spawner.run('/bin/cat', []);
    expect((await output(run)).length).toBe(0);
    expect((await run.exited).code).toBe(0);
  });

  it('kills the process on abort', async () => {
    const abort = new AbortController();
    const run = spawner.run('/bin/sleep', ['30'], { signal: abort.signal });
    const pid = await run.started;
    expect(probe(pid)).toBeNull();
    abort.abort();
    expect(await run.exited).toMatchObject({ code: null, signal: 'SIGKILL', timedOut: false });
    // The spawner reaps it before reporting the exit.
    expect(probe(pid)).toBe('ESRCH');
  });

  it('starts nothing for an already aborted signal', async () => {
    const run = spawner.run('/bin/sleep', ['30'], { signal: AbortSignal.abort() });
    await expect(run.started).rejects.toBeInstanceOf(SpawnerError);
    expect(await run.exited).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect((await output(run)).length).toBe(0);
  });

  it('kills the process at its timeout', async () => {
    const run = spawner.run('/bin/sleep', ['30'], { timeoutMs: 100 });
    const pid = await run.started;
    expect(await run.exited).toMatchObject({ code: null, signal: 'SIGKILL', timedOut: true });
    expect(probe(pid)).toBe('ESRCH');
  });

  it('reports a missing binary as spawn_failed', async () => {
    const run = spawner.run('/nonexistent/binary', ['x']);
    expect((await output(run)).length).toBe(0);
    await expect(run.exited).rejects.toMatchObject({ code: 'spawn_failed', errno: 'ENOENT', message: 'spawn /nonexistent/binary ENOENT' });
    await expect(run.started).rejects.toBeInstanceOf(SpawnerError);
    // The spawner is fine afterwards.
    expect((await output(spawner.run('/bin/echo', ['ok']))).toString()).toBe('ok\n');
  });

  it('fails in-flight runs clearly when the spawner dies, kills their processes, and starts a new one', async () => {
    const runs = [spawner.run('/bin/sleep', ['30']), spawner.run('/bin/sleep', ['30'])];
    const pids = await Promise.all(runs.map((r) => r.started));
    const first = spawner.pid!;
    process.kill(first, 'SIGKILL');
    for (const run of runs) {
      await expect(run.exited).rejects.toMatchObject({ code: 'spawner_died', message: expect.stringContaining('spawner process exited (SIGKILL)') });
      await expect(output(run)).rejects.toMatchObject({ code: 'spawner_died' });
    }
    await waitUntil(() => pids.every(dead), { what: 'orphaned processes to die', timeoutMs: 5000 });
    const next = spawner.run('/bin/echo', ['again']);
    expect((await output(next)).toString()).toBe('again\n');
    expect(spawner.pid).not.toBe(first);
  });

  it('exits, killing its processes, when the worker dies', async () => {
    const worker = spawn(process.execPath, script(`const s = new Spawner(); const r = s.run('/bin/sleep', ['30']); const pid = await r.started; console.log(JSON.stringify({ spawner: s.pid, child: pid }));`), {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve) => worker.stdout.once('data', (d: Buffer) => resolve(d.toString())));
    const { spawner: spawnerPid, child } = JSON.parse(line) as { spawner: number; child: number };
    expect(probe(spawnerPid)).toBeNull();
    worker.kill('SIGKILL');
    // Not our children: init reaps them, so poll.
    await waitUntil(() => dead(spawnerPid) && dead(child), { what: 'spawner and its process to exit', timeoutMs: 10_000 });
  });

  it('does not keep an idle process alive', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, script(`const s = new Spawner(); const r = s.run('/bin/echo', ['done']); for await (const c of r.stdout) process.stdout.write(c); await r.exited;`), { timeout: 20_000 }, (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    expect(out).toBe('done\n');
  });

  it('runs real espeak-ng concurrently', async () => {
    const texts = ['one', 'two three', 'four five six'];
    const wavs = await Promise.all(texts.map((t) => output(spawner.run('espeak-ng', ['-v', 'en-us', '--stdout'], { stdin: t }))));
    for (const wav of wavs) expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    // Longer text, longer audio: each run got its own text.
    expect(wavs[0]!.length).toBeLessThan(wavs[2]!.length);
  });

  it('turns a spawner death into provider errors, not crashes', async () => {
    const hang = path.join(dir, 'hang');
    writeFileSync(hang, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hang, 0o755);
    const tts = new EspeakTts({ binary: hang, spawner });
    const synth = (async () => {
      for await (const _ of tts.synthesize('hello', new AbortController().signal)) void _;
    })();
    const session = await new PocketsphinxStt({ binary: hang, spawner }).open();
    session.speechStarted();
    session.push(speech('goodbye'));
    session.push(silence(100));
    const stt = session.endOfTurn(new AbortController().signal);
    // endOfTurn writes its audio file first: wait for both processes to run.
    await waitUntil(() => spawner.pid !== undefined && countChildren(spawner.pid) >= 2, { what: 'both provider processes', timeoutMs: 10_000 });
    process.kill(spawner.pid!, 'SIGKILL');
    await expect(synth).rejects.toMatchObject({ name: 'ProviderError', code: 'tts_failed', message: expect.stringContaining('spawner process exited') });
    await expect(stt).rejects.toMatchObject({ name: 'ProviderError', code: 'stt_failed', message: expect.stringContaining('spawner process exited') });
  });
});

/** Live children of a process (from /proc/<pid>/task/<pid>/children). */
function countChildren(pid: number): number {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).length;
  } catch {
    return 0;
  }
}
