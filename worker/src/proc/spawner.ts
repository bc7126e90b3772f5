// Runs the worker's provider processes (espeak-ng, pocketsphinx) through a small long-lived spawner
// process. On Linux libuv spawns with fork(), whose cost grows with the parent's RSS: from the worker
// (hundreds of MB) each spawn blocked the event loop that paces every call's audio for ~20 ms. The
// spawner is small, so its forks are cheap, and they happen off the worker's event loop entirely.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ParentMessage } from './protocol.js';

export type SpawnerErrorCode =
  /** The command could not start (missing binary, not executable): `errno` says why. */
  | 'spawn_failed'
  /** The spawner process died or was closed while the run was in flight. */
  | 'spawner_died';

export class SpawnerError extends Error {
  constructor(
    readonly code: SpawnerErrorCode,
    message: string,
    readonly errno?: string,
  ) {
    super(message);
    this.name = 'SpawnerError';
  }
}

export interface RunOptions {
  /** Written to the process's stdin, which is then closed (unless `pipe`). Without it (or `pipe`) stdin is /dev/null. */
  stdin?: Buffer | string;
  /** Stdin stays open: the handle's `write` feeds it, `end` closes it (a long-lived helper process). */
  pipe?: boolean;
  /** False: this run does not keep the worker's event loop alive by itself (a helper idling between calls). */
  keepAlive?: boolean;
  /** SIGKILL the process after this long; the exit then says `timedOut`. */
  timeoutMs?: number;
  /** SIGKILL the process on abort. */
  signal?: AbortSignal;
}

export interface RunExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The tail of what the process wrote to stderr. */
  stderr: string;
}

export interface RunHandle {
  /** The process's stdout, chunk by chunk; throws a SpawnerError if the spawner dies mid-run. */
  readonly stdout: AsyncIterable<Buffer>;
  /** The process's pid once it started; rejects with a SpawnerError if it could not. */
  readonly started: Promise<number>;
  /** Resolves when the process exited and its output was delivered; rejects with a SpawnerError. */
  readonly exited: Promise<RunExit>;
  /** SIGKILL the process (no-op once it exited). */
  kill(): void;
  /** With `pipe`: more bytes for its stdin, in order (no-op once it exited). */
  write(data: Uint8Array): void;
  /** With `pipe`: closes its stdin. */
  end(): void;
}

interface Run {
  pid: number | null;
  keepAlive: boolean;
  done: boolean;
  chunks: Buffer[];
  ended: boolean;
  error: SpawnerError | null;
  wake: (() => void) | null;
  resolveStarted(pid: number): void;
  resolveExit(exit: Omit<RunExit, 'timedOut'>): void;
  fail(err: SpawnerError): void;
}

/** The compiled child entry; under jest the sources run as .ts from src/, so use the build in dist/. */
function childEntry(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return path.resolve(path.dirname(here), '..', '..', 'dist', 'proc', 'spawner-child.js');
  return path.join(path.dirname(here), 'spawner-child.js');
}

export class Spawner {
  private child: ChildProcess | null = null;
  /** Messages for a child that has not said 'ready' yet (one sent earlier could be lost). */
  private queue: ParentMessage[] | null = null;
  private readonly runs = new Map<number, Run>();
  private nextId = 1;

  /** The spawner process's pid, if one is running (the bench reads its CPU time). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the spawner process now rather than on the first run (saves the first call the fork). */
  start(): void {
    this.ensureChild();
  }

  run(command: string, args: string[], opts: RunOptions = {}): RunHandle {
    const id = this.nextId++;
    let resolveStarted!: (pid: number) => void;
    let rejectStarted!: (e: SpawnerError) => void;
    const started = new Promise<number>((res, rej) => ((resolveStarted = res), (rejectStarted = rej)));
    let resolveExited!: (e: RunExit) => void;
    let rejectExited!: (e: SpawnerError) => void;
    const exited = new Promise<RunExit>((res, rej) => ((resolveExited = res), (rejectExited = rej)));
    // Callers may await only one of them: the other must not become an unhandled rejection.
    started.catch(() => undefined);
    exited.catch(() => undefined);

    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => kill();
    const cleanup = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      this.runs.delete(id);
      this.refChannel();
    };
    const wake = () => {
      const w = run.wake;
      run.wake = null;
      w?.();
    };
    const run: Run = {
      pid: null,
      keepAlive: opts.keepAlive ?? true,
      done: false,
      chunks: [],
      ended: false,
      error: null,
      wake: null,
      resolveStarted: (pid) => {
        run.pid = pid;
        resolveStarted(pid);
      },
      resolveExit: (exit) => {
        if (run.done) return;
        run.done = true;
        run.ended = true;
        cleanup();
        wake();
        resolveExited({ ...exit, timedOut });
      },
      fail: (err) => {
        if (run.done) return;
        run.done = true;
        // A process that never started had no output: stdout just ends, the promises say why.
        if (err.code === 'spawn_failed') run.ended = true;
        else run.error = err;
        cleanup();
        wake();
        rejectStarted(err);
        rejectExited(err);
      },
    };
    const kill = () => {
      if (!run.done) this.send({ t: 'kill', id });
    };
    const write = (data: Uint8Array) => {
      if (opts.pipe && !run.done) this.send({ t: 'write', id, data });
    };
    const end = () => {
      if (opts.pipe && !run.done) this.send({ t: 'end', id });
    };

    const stdout: AsyncIterable<Buffer> = {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<Buffer>> => {
          for (;;) {
            const chunk = run.chunks.shift();
            if (chunk) return { value: chunk, done: false };
            if (run.error) throw run.error;
            if (run.ended) return { value: undefined, done: true };
            await new Promise<void>((resolve) => (run.wake = resolve));
          }
        },
        return: async (): Promise<IteratorResult<Buffer>> => {
          // The consumer stopped reading: drop what comes (the process is left to the caller's kill()).
          run.ended = true;
          run.chunks.length = 0;
          return { value: undefined, done: true };
        },
      }),
    };

    if (opts.signal?.aborted) {
      // Aborted before it began: no process at all.
      run.done = run.ended = true;
      rejectStarted(new SpawnerError('spawn_failed', 'aborted before start'));
      resolveExited({ code: null, signal: 'SIGKILL', timedOut: false, stderr: '' });
      return { stdout, started, exited, kill, write, end };
    }

    this.runs.set(id, run);
    this.refChannel();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, opts.timeoutMs);
    }
    this.send({ t: 'run', id, command, args, stdin: opts.stdin, pipe: opts.pipe });
    return { stdout, started, exited, kill, write, end };
  }

  /** Ends the spawner process (its running processes are killed) and waits for it to exit. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.detach(child, 'the spawner was closed');
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Closing the channel is the child's signal to kill its processes and exit.
    if (child.connected) child.disconnect();
    else child.kill('SIGKILL');
    await gone;
  }

  private ensureChild(): ChildProcess {
    if (this.child) return this.child;
    const child = fork(childEntry(), [], {
      serialization: 'advanced',
      // None of the worker's node flags (--cpu-prof, heap sizes, inspector): just a small process.
      execArgv: [],
      // Its own process group: a terminal's Ctrl-C (SIGINT to the group) starts the worker's drain
      // and must not kill the processes of the calls being drained. It still dies with the worker.
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    this.queue = [];
    child.on('message', (msg: ChildMessage) => {
      if (this.child === child) this.onMessage(msg);
    });
    child.once('exit', (code, signal) => this.detach(child, `the spawner process exited (${signal ?? `code ${code}`})`));
    child.on('error', (e) => {
      // fork() itself failed (no 'exit' follows); other errors are sends to a dead child, which 'exit' handles.
      if (child.pid === undefined) this.detach(child, `the spawner process could not start (${e.message})`);
    });
    this.refChannel();
    return child;
  }

  /** Forgets a spawner process that is gone: its runs fail, and the next run starts a new one. */
  private detach(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    this.queue = null;
    for (const run of [...this.runs.values()]) {
      // Its processes were orphaned if the spawner was killed: they must not run on unattended.
      if (run.pid !== null) {
        try {
          process.kill(run.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      run.fail(new SpawnerError('spawner_died', `${why} while running a process`));
    }
  }

  private send(msg: ParentMessage): void {
    const child = this.ensureChild();
    if (this.queue) {
      this.queue.push(msg);
      return;
    }
    child.send(msg, (err) => {
      // The channel broke under us: the 'exit' handler fails the runs (and a later run restarts it).
      if (err && this.child === child) child.kill('SIGKILL');
    });
  }

  private onMessage(msg: ChildMessage): void {
    if (msg.t === 'ready') {
      const queued = this.queue ?? [];
      this.queue = null;
      for (const m of queued) this.send(m);
      return;
    }
    const run = this.runs.get(msg.id);
    if (!run) return;
    switch (msg.t) {
      case 'spawned':
        run.resolveStarted(msg.pid);
        break;
      case 'failed':
        run.fail(new SpawnerError('spawn_failed', msg.message, msg.errno));
        break;
      case 'out':
        if (run.ended) break;
        run.chunks.push(Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength));
        if (run.wake) {
          const w = run.wake;
          run.wake = null;
          w();
        }
        break;
      case 'exit':
        run.resolveExit({ code: msg.code, signal: msg.signal, stderr: msg.stderr });
        break;
    }
  }

  /** The idle spawner must not keep the worker (or a test process) alive; a running one must. */
  private refChannel(): void {
    const child = this.child;
    if (!child) return;
    const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined;
    if ([...this.runs.values()].some((r) => r.keepAlive)) {
      child.ref();
      channel?.ref?.();
    } else {
      child.unref();
      channel?.unref?.();
    }
  }
}

let shared: Spawner | null = null;

/** The process-wide spawner for providers built without one (tests, tools). */
export function sharedSpawner(): Spawner {
  return (shared ??= new Spawner());
}
