// The worker's live pocketsphinx decoders: one long-lived Python process (worker/python/live_decoder.py, on the
// Debian `python3-pocketsphinx` binding) holds one decoder per call, fed the caller's audio while the caller
// speaks, so a partial hypothesis is there at once and the final one right after the end of speech. It is
// started through the worker's spawner (proc/spawner.ts: the fork happens off the calls' event loop), at boot
// and again for the next session after it died; a death fails the sessions it held (stage `stt`).
// Frames on its stdin/stdout: u8 type, u32 session, u32 length, payload (see the Python program).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pcmToBytes } from '../audio/pcm.js';
import { sharedSpawner, SpawnerError, type RunHandle, type Spawner } from '../proc/spawner.js';
import { ProviderError } from '../providers/errors.js';

/** One decoder: the acoustic model, a dictionary, a JSGF grammar or a language model, pocketsphinx parameters. */
export interface DecoderConfig {
  hmm: string;
  dict: string;
  jsgf?: string;
  lm?: string;
  params?: Record<string, string | number | boolean>;
  /** Decodes a tentative stretch (speech over the bot) whole at an overlap peek; shared by the sessions with the same one. */
  overlap?: Omit<DecoderConfig, 'overlap'> | null;
}

export interface LiveDecoderOptions {
  /** A Python with the pocketsphinx binding (Debian's python3-pocketsphinx is for /usr/bin/python3). */
  python?: string;
  script?: string;
  /** Starts the decoder process; default: the process-wide spawner. */
  spawner?: Spawner;
  /** An open, peek or end of utterance not answered this long: the process is taken as hung and killed. */
  timeoutMs?: number;
  /** Told once when live decoding cannot run here (no binding, no Python): sessions decode per turn then. */
  onUnavailable?: (why: string) => void;
  /** A decoder process said it is ready (each start, a restart after a loss too). */
  onReady?: () => void;
  /** The process died with `calls` sessions (they failed); the next session starts a new one. */
  onLost?: (err: ProviderError, calls: number) => void;
}

/** Live decoding cannot run on this worker (the binding or Python is missing): decode per turn instead. */
export class LiveUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LiveUnavailableError';
  }
}

const HEADER_BYTES = 9;
/** The Python program's exit code when the binding cannot be imported. */
const EXIT_NO_BINDING = 3;
/**
 * Audio is sent in batches this often (all calls' in one write: the hop through the spawner costs CPU per
 * message); a peek or an end of turn sends the batch at once before itself, so no answer waits for this.
 */
const FLUSH_MS = 100;

function frame(kind: string, sid: number, payload?: Uint8Array): Buffer {
  const len = payload?.byteLength ?? 0;
  const out = Buffer.allocUnsafe(HEADER_BYTES + len);
  out.writeUInt8(kind.charCodeAt(0), 0);
  out.writeUInt32LE(sid, 1);
  out.writeUInt32LE(len, 5);
  if (payload) out.set(payload, HEADER_BYTES);
  return out;
}

/** worker/python/live_decoder.py, from src/stt (jest) or dist/stt (the build) alike. */
function defaultScript(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'python', 'live_decoder.py');
}

interface Pending {
  resolve(text: string): void;
  reject(err: ProviderError): void;
}

/** One run of the Python program. */
class DecoderProcess {
  readonly sessions = new Map<number, LiveSession>();
  readonly ready: Promise<void>;
  pid: number | undefined;
  dead: ProviderError | null = null;
  private out: Buffer[] = [];
  private outBytes = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly run: RunHandle,
    private readonly onGone: (p: DecoderProcess, err: ProviderError | LiveUnavailableError, calls: number) => void,
  ) {
    let ready!: () => void;
    let notReady!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => ((ready = res), (notReady = rej)));
    this.ready.catch(() => undefined);
    void run.started.then((pid) => (this.pid = pid), () => undefined);
    let isReady = false;
    void this.read(() => {
      isReady = true;
      ready();
    });
    void run.exited.then(
      (exit) => {
        const how = exit.signal ?? `code ${exit.code}`;
        const tail = exit.stderr.trim().split('\n').slice(-2).join(' ').slice(-300);
        // Gone before it said ready (no binding, a Python or program that cannot run): it will not run here.
        if (!isReady) return this.gone(new LiveUnavailableError(exit.code === EXIT_NO_BINDING ? tail || 'no pocketsphinx Python binding' : `the decoder program exited at start (${how})${tail ? `: ${tail}` : ''}`), notReady);
        this.gone(new ProviderError('stt', 'failed', `the live pocketsphinx decoder exited (${how})${tail ? `: ${tail}` : ''}`), notReady);
      },
      (err: unknown) => {
        if (err instanceof SpawnerError && err.code === 'spawn_failed') return this.gone(new LiveUnavailableError(`cannot start Python: ${err.message}`), notReady);
        this.gone(new ProviderError('stt', 'failed', `the live pocketsphinx decoder was lost: ${err instanceof Error ? err.message : String(err)}`), notReady);
      },
    );
  }

  private gone(err: ProviderError | LiveUnavailableError, notReady: (e: Error) => void): void {
    if (this.dead) return;
    const failure = err instanceof ProviderError ? err : new ProviderError('stt', 'unavailable', err.message, { retryable: false });
    this.dead = failure;
    if (this.timer) clearTimeout(this.timer);
    notReady(err);
    const calls = [...this.sessions.values()];
    this.sessions.clear();
    for (const s of calls) s.broke(failure);
    this.onGone(this, err, calls.length);
  }

  private async read(onReady: () => void): Promise<void> {
    let acc: Buffer = Buffer.alloc(0);
    try {
      for await (const chunk of this.run.stdout) {
        acc = acc.length ? Buffer.concat([acc, chunk]) : chunk;
        while (acc.length >= HEADER_BYTES) {
          const len = acc.readUInt32LE(5);
          if (acc.length < HEADER_BYTES + len) break;
          const kind = String.fromCharCode(acc[0]!);
          const sid = acc.readUInt32LE(1);
          const payload = acc.subarray(HEADER_BYTES, HEADER_BYTES + len);
          acc = acc.subarray(HEADER_BYTES + len);
          if (kind === 'R') onReady();
          else this.sessions.get(sid)?.answer(kind, payload.toString('utf8'));
        }
      }
    } catch {
      // The spawner died: `exited` rejects and says so.
    }
  }

  /** Queues a frame; `now`: a request someone waits for, sent at once with the audio before it. */
  send(buf: Buffer, now: boolean): void {
    if (this.dead) return;
    this.out.push(buf);
    this.outBytes += buf.length;
    if (now) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.out.length || this.dead) return;
    const data = this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out, this.outBytes);
    this.out = [];
    this.outBytes = 0;
    this.run.write(data);
  }
}

export class LiveDecoder {
  private proc: DecoderProcess | null = null;
  private unavailable: string | null = null;
  private nextSid = 1;
  /** Sessions opened (one decoder each, for a whole call). */
  opened = 0;
  /** What the latest session's decoder cost: CPU in the process, or an idle one taken again. */
  lastLoad: { loadCpuMs: number; reused: boolean } | null = null;

  constructor(private readonly opts: LiveDecoderOptions = {}) {}

  /** The decoder process's pid while one runs (the bench reads its CPU time). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Why live decoding cannot run here, once known (null: it can, or it was not tried yet). */
  get unavailableReason(): string | null {
    return this.unavailable;
  }

  /** Starts the process now (at boot: the first call does not wait for Python, and a missing binding is said at once). */
  start(): void {
    void this.ensure()?.ready.catch(() => undefined);
  }

  private ensure(): DecoderProcess | null {
    if (this.unavailable) return null;
    if (this.proc) return this.proc;
    const spawner = this.opts.spawner ?? sharedSpawner();
    const run = spawner.run(this.opts.python ?? '/usr/bin/python3', [this.opts.script ?? defaultScript()], { pipe: true, keepAlive: false });
    this.proc = new DecoderProcess(run, (p, err, calls) => {
      if (this.proc === p) this.proc = null;
      if (err instanceof LiveUnavailableError) {
        if (this.unavailable) return;
        this.unavailable = err.message;
        this.opts.onUnavailable?.(err.message);
      } else this.opts.onLost?.(err, calls);
    });
    this.proc.ready.then(() => this.opts.onReady?.(), () => undefined);
    return this.proc;
  }

  /**
   * A decoder for one call. Throws LiveUnavailableError when live decoding cannot run on this worker, and a
   * ProviderError (stage `stt`) when the decoder could not be made; `onError`: the process died mid-call.
   */
  async open(cfg: DecoderConfig, onError: (err: ProviderError) => void): Promise<LiveSession> {
    const proc = this.ensure();
    if (!proc) throw new LiveUnavailableError(this.unavailable!);
    await this.whenReady(proc);
    const session = new LiveSession(proc, this.nextSid++, onError, this.opts.timeoutMs ?? 15_000);
    try {
      this.lastLoad = await session.open(cfg);
    } catch (err) {
      session.close();
      throw err;
    }
    this.opened++;
    return session;
  }

  /** The process's start, bounded (its run does not keep the event loop alive: this wait's timer does). */
  private async whenReady(proc: DecoderProcess): Promise<void> {
    const timeoutMs = this.opts.timeoutMs ?? 15_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        proc.run.kill();
        reject(new ProviderError('stt', 'timeout', `the live pocketsphinx decoder did not start within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    try {
      await Promise.race([proc.ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the decoder process (its sessions fail) and waits for it. */
  async close(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    proc.run.kill();
    await proc.run.exited.catch(() => undefined);
  }
}

/** One call's decoder in the process: utterances are started, fed, peeked at and ended in order. */
export class LiveSession {
  private readonly pending: Pending[] = [];
  private failed: ProviderError | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly proc: DecoderProcess,
    readonly id: number,
    private readonly onError: (err: ProviderError) => void,
    private readonly timeoutMs: number,
  ) {
    proc.sessions.set(id, this);
  }

  /** Makes the decoder: the CPU the process spent on it, and whether an idle one was taken instead. */
  async open(cfg: DecoderConfig): Promise<{ loadCpuMs: number; reused: boolean }> {
    return JSON.parse(await this.request(frame('O', this.id, Buffer.from(JSON.stringify(cfg))))) as { loadCpuMs: number; reused: boolean };
  }

  /** A new utterance (the caller began to speak), with its first audio (the pre-roll). */
  start(pcm: Int16Array): void {
    this.send(frame('S', this.id, pcmToBytes(pcm)));
  }

  feed(pcm: Int16Array): void {
    this.send(frame('A', this.id, pcmToBytes(pcm)));
  }

  /** The utterance's best hypothesis so far; `overlap`: of a stretch over the bot, with the overlap grammar. */
  peek(overlap: boolean): Promise<string> {
    return this.request(frame('P', this.id, Uint8Array.of(overlap ? 1 : 0)));
  }

  /** Ends the utterance: its final hypothesis. */
  final(): Promise<string> {
    return this.request(frame('F', this.id));
  }

  /** Ends the utterance unheard (its words were taken from a peek). */
  drop(): void {
    this.send(frame('D', this.id));
  }

  /** Frees the decoder (the process keeps it for the next call with the same grammar). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.send(frame('C', this.id));
    this.proc.sessions.delete(this.id);
    this.settle(new ProviderError('stt', 'failed', 'the live decoder session was closed'));
  }

  /** The process died (or hung): this session's requests fail, and so does the call. */
  broke(err: ProviderError): void {
    if (this.failed || this.closed) return;
    this.failed = err;
    this.settle(err);
    this.onError(err);
  }

  answer(kind: string, text: string): void {
    const p = this.pending.shift();
    this.armTimer();
    if (!p) return;
    if (kind === 'E') p.reject(new ProviderError('stt', 'failed', `live pocketsphinx decoder: ${text}`));
    else p.resolve(text);
  }

  private send(buf: Buffer, now = false): void {
    if (this.failed || (this.closed && buf[0] !== 0x43)) return;
    this.proc.send(buf, now);
  }

  private request(buf: Buffer): Promise<string> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new ProviderError('stt', 'failed', 'the live decoder session was closed'));
    const result = new Promise<string>((resolve, reject) => this.pending.push({ resolve, reject }));
    this.armTimer();
    this.proc.send(buf, true);
    return result;
  }

  /** One timer for the oldest request: the process answers in order, so a late answer means it hangs. */
  private armTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending.length) return;
    this.timer = setTimeout(() => {
      const err = new ProviderError('stt', 'timeout', `the live pocketsphinx decoder did not answer within ${this.timeoutMs} ms`);
      // A hung process serves no one: its death fails its other sessions and the next session starts a new one.
      this.broke(err);
      this.proc.run.kill();
    }, this.timeoutMs);
  }

  private settle(err: ProviderError): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const p of this.pending.splice(0)) p.reject(err);
  }
}
