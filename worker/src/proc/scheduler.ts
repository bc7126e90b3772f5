// Fair turns for the calls' recogniser and synthesiser processes (docs/design.md §15). Started all at once,
// a burst of new calls' greetings and a talking call's reply shared the CPU equally and every one of them
// finished late. Here each call runs at most one process at a time, at most `concurrency` run together (the
// CPU allowance), and the oldest turn goes first: a job continuing a turn already under way (the reply's next
// sentence) carries that turn's start, so a burst of new calls queued meanwhile cannot open a gap in a reply
// that is playing.
import type { RunExit, RunHandle, RunOptions, Spawner } from './spawner.js';
import { SpawnerError } from './spawner.js';

/** What a provider needs to start a process: the spawner, or one call's share of it. */
export interface ProcessRunner {
  run(command: string, args: string[], opts?: RunOptions): RunHandle;
}

/** A call's work that follows its previous job within this long continues the same turn. */
const SAME_TURN_MS = 2000;

interface Job {
  callId: string;
  enqueuedAtMs: number;
  /** When the turn this job belongs to started: the queue's order. */
  turnAtMs: number;
  start(): void;
  cancel(): void;
}

export class FairScheduler {
  private readonly queue: Job[] = [];
  /** Calls with a process running now. */
  private readonly busy = new Set<string>();
  private running = 0;
  /** Per call: when its current turn started and when its last job was queued or ended. */
  private readonly turns = new Map<string, { startedAtMs: number; lastAtMs: number; open: number }>();

  constructor(
    private readonly spawner: Pick<Spawner, 'run'>,
    /** How many processes may run at once (the cores of the CPU allowance), read at each start. */
    private readonly concurrency: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Jobs waiting to start. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Age of the oldest job waiting for the CPU, in ms (0: none waits): part of the worker's load. A job waiting
   * for its own call's previous one (the next sentence behind this one) is in order, not a sign of overload.
   */
  oldestQueuedMs(): number {
    const oldest = this.queue.find((j) => !this.busy.has(j.callId));
    return oldest ? Math.max(0, this.now() - oldest.enqueuedAtMs) : 0;
  }

  /** One call's runner: its processes start in turn, one at a time. */
  forCall(callId: string): ProcessRunner {
    return { run: (command, args, opts = {}) => this.submit(callId, command, args, opts) };
  }

  private submit(callId: string, command: string, args: string[], opts: RunOptions): RunHandle {
    let inner: RunHandle | null = null;
    /** A piped stdin's bytes (null: its end) written before the process started. */
    const writes: Array<Uint8Array | null> = [];
    let cancelled = false;
    let wakeReader: (() => void) | null = null;
    let resolveStarted!: (pid: number) => void;
    let rejectStarted!: (e: SpawnerError) => void;
    const started = new Promise<number>((res, rej) => ((resolveStarted = res), (rejectStarted = rej)));
    let resolveExited!: (e: RunExit) => void;
    let rejectExited!: (e: SpawnerError) => void;
    const exited = new Promise<RunExit>((res, rej) => ((resolveExited = res), (rejectExited = rej)));
    started.catch(() => undefined);
    exited.catch(() => undefined);

    const now = this.now();
    const turn = this.turns.get(callId);
    const turnAtMs = turn && (turn.open > 0 || now - turn.lastAtMs <= SAME_TURN_MS) ? turn.startedAtMs : now;
    this.turns.set(callId, { startedAtMs: turnAtMs, lastAtMs: now, open: (turn?.open ?? 0) + 1 });
    const job: Job = {
      callId,
      enqueuedAtMs: now,
      turnAtMs,
      start: () => {
        inner = this.spawner.run(command, args, opts);
        for (const w of writes) (w === null ? inner.end() : inner.write(w));
        writes.length = 0;
        inner.started.then(resolveStarted, rejectStarted);
        // The slot is the call's until its process is gone (output delivered or not: the spawner buffers it).
        inner.exited.then(resolveExited, rejectExited).finally(() => this.finished(callId));
        const w = wakeReader;
        wakeReader = null;
        w?.();
      },
      // Never started (killed or aborted while waiting): no process, as the spawner answers an aborted run.
      cancel: () => {
        cancelled = true;
        this.closeJob(callId);
        rejectStarted(new SpawnerError('spawn_failed', 'aborted before start'));
        resolveExited({ code: null, signal: 'SIGKILL', timedOut: false, stderr: '' });
        const w = wakeReader;
        wakeReader = null;
        w?.();
      },
    };
    const dequeue = () => {
      const i = this.queue.indexOf(job);
      if (i < 0) return false;
      this.queue.splice(i, 1);
      job.cancel();
      return true;
    };
    const onAbort = () => {
      if (!inner) dequeue();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    void exited.finally(() => opts.signal?.removeEventListener('abort', onAbort));

    const stdout: AsyncIterable<Buffer> = {
      [Symbol.asyncIterator]: () => {
        let it: AsyncIterator<Buffer> | null = null;
        return {
          next: async (): Promise<IteratorResult<Buffer>> => {
            while (!inner && !cancelled) await new Promise<void>((resolve) => (wakeReader = resolve));
            if (!inner) return { value: undefined, done: true };
            it ??= inner.stdout[Symbol.asyncIterator]();
            return it.next();
          },
          return: async (): Promise<IteratorResult<Buffer>> => {
            if (it?.return) await it.return();
            return { value: undefined, done: true };
          },
        };
      },
    };

    if (opts.signal?.aborted) job.cancel();
    else {
      this.queue.push(job);
      this.pump();
    }
    return {
      stdout,
      started,
      exited,
      kill: () => {
        if (inner) inner.kill();
        else dequeue();
      },
      write: (data) => {
        if (inner) inner.write(data);
        else if (!cancelled) writes.push(data);
      },
      end: () => {
        if (inner) inner.end();
        else if (!cancelled) writes.push(null);
      },
    };
  }

  private finished(callId: string): void {
    this.busy.delete(callId);
    this.running--;
    this.closeJob(callId);
    this.pump();
  }

  private closeJob(callId: string): void {
    const turn = this.turns.get(callId);
    if (!turn) return;
    turn.open--;
    turn.lastAtMs = this.now();
    // Forgotten once idle past a turn's gap: a call that ended leaves nothing behind.
    if (turn.open <= 0) setTimeout(() => this.turns.get(callId) === turn && turn.open <= 0 && this.turns.delete(callId), SAME_TURN_MS + 100).unref();
  }

  /** Starts the waiting jobs of the oldest turns of calls with nothing running, while the CPU allowance has room. */
  private pump(): void {
    const limit = Math.max(1, Math.round(this.concurrency()));
    while (this.running < limit) {
      let i = -1;
      for (let k = 0; k < this.queue.length; k++) {
        const j = this.queue[k]!;
        if (this.busy.has(j.callId)) continue;
        if (i < 0 || j.turnAtMs < this.queue[i]!.turnAtMs) i = k;
      }
      if (i < 0) return;
      const [job] = this.queue.splice(i, 1);
      this.busy.add(job!.callId);
      this.running++;
      job!.start();
    }
  }
}
