// Offline STT with CMU pocketsphinx (Debian `pocketsphinx`, model `pocketsphinx-en-us`). Each turn's
// audio (from a little before the VAD's speech start) is decoded by `pocketsphinx_continuous`. When
// the bot has a policy, recognition is constrained by a JSGF grammar of the policy's example phrases
// with a dictionary of just their words: small, fast, and far more accurate than the open language model.
// The process is started through the worker's spawner (proc/spawner.ts), off the calls' event loop.
// With a live decoder (live-decoder.ts) and a grammar, a call's decoder instead stays loaded for the whole call
// and hears the caller's turns as they are spoken: the final words are there right after the end of speech.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { concatPcm, pcmToBytes, samplesFor } from '../audio/pcm.js';
import { sharedSpawner, SpawnerError, type RunHandle } from '../proc/spawner.js';
import type { ProcessRunner } from '../proc/scheduler.js';
import { ProviderError } from '../providers/errors.js';
import { LiveUnavailableError, type DecoderConfig, type LiveDecoder } from './live-decoder.js';
import type { SttListener, SttProvider, SttSession } from './stt.js';

export interface PocketsphinxOptions {
  binary?: string;
  modelDir?: string;
  /** Phrases the caller is expected to say; builds the grammar. Empty: the open language model. */
  phrases?: string[];
  timeoutMs?: number;
  /** Starts the pocketsphinx processes; default: the process-wide one. */
  spawner?: ProcessRunner;
  /**
   * Decodes the calls of a bot with phrases live (one decoder per call, fed while the caller speaks); without
   * it, or where it cannot run, each turn is decoded whole at its end. The open language model stays per turn.
   */
  live?: LiveDecoder | null;
  /** The open language model live too (bench:stt measures it: ~80 MB per call in the decoder process, still ~120 ms at the end; off). */
  liveOpenModel?: boolean;
}

const SAMPLE_RATE = 16000;
const PRE_ROLL_MS = 400;
const PAD_MS = 300;
const MAX_TURN_MS = 30_000;
/** Silence (10 ms frames) the decoder keeps inside an utterance: past the longest end-of-turn silence a bot may set (5 s). */
const VAD_POSTSPEECH_FRAMES = 600;

// Wide beams: a small grammar is cheap to search, and the default beams lose whole phrases.
const GRAMMAR_PARAMS = { beam: 1e-80, pbeam: 1e-80, wbeam: 1e-60 };

/** The last PRE_ROLL_MS of audio before speech starts (the VAD hears a word's start late). */
class PreRoll {
  private parts: Int16Array[] = [];
  private samples = 0;
  constructor(private readonly max: number) {}
  push(pcm: Int16Array): void {
    this.parts.push(pcm);
    this.samples += pcm.length;
    while (this.parts.length > 1 && this.samples - this.parts[0]!.length >= this.max) this.samples -= this.parts.shift()!.length;
  }
  take(): Int16Array[] {
    this.samples = 0;
    return this.parts.splice(0);
  }
}

let dictCache: { file: string; words: Map<string, string[]> } | null = null;

function loadDict(file: string): Map<string, string[]> {
  if (dictCache?.file === file) return dictCache.words;
  const words = new Map<string, string[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const head = line.slice(0, sp);
    const base = head.replace(/\(\d+\)$/, '');
    const list = words.get(base) ?? [];
    list.push(line);
    words.set(base, list);
  }
  dictCache = { file, words };
  return words;
}

/** Lower case words of a phrase as the dictionary spells them. */
export function normalisePhrase(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** What callers say over a bot or to stop it, for the partial grammar (backchannels.ts has the acknowledgements). */
const OVERLAP_WORDS = ['uh-huh', 'mhm', 'yeah', 'yes', 'okay', 'right', 'sure', 'wait', 'stop', 'no', 'sorry', 'hold on', 'excuse me'];

export interface Grammar {
  gram: string;
  dict: string;
  /** Phrases dropped because a word is missing from the dictionary. */
  dropped: string[];
}

/**
 * Writes (once per phrase set) a JSGF grammar and a matching small dictionary. `partial`: the grammar of a turn
 * heard so far (smart turn detection, docs/design.md §11): every phrase's first words too, so a caller who paused
 * mid-phrase is heard as such rather than forced into a whole phrase; `overlap` adds the short words a caller
 * says over the bot (acknowledgements, "wait", "stop"), so those are told apart (only there: they would draw
 * ordinary words to themselves).
 */
export function buildGrammar(phrases: string[], modelDir: string, partial: false | 'prefixes' | 'overlap' = false): Grammar | null {
  const words = loadDict(path.join(modelDir, 'cmudict-en-us.dict'));
  const kept = new Set<string>();
  const dropped: string[] = [];
  for (const p of phrases) {
    const ws = normalisePhrase(p);
    if (ws.length && ws.every((w) => words.has(w))) {
      kept.add(ws.join(' '));
      if (partial) for (let n = 1; n < ws.length; n++) kept.add(ws.slice(0, n).join(' '));
    } else dropped.push(p);
  }
  if (partial === 'overlap' && kept.size) for (const p of OVERLAP_WORDS) if (normalisePhrase(p).every((w) => words.has(w))) kept.add(p);
  if (!kept.size) return null;
  const list = [...kept].sort();
  const hash = createHash('sha256').update(list.join('|')).digest('hex').slice(0, 16);
  const dir = path.join(tmpdir(), 'vp-worker-pocketsphinx');
  mkdirSync(dir, { recursive: true });
  const gram = path.join(dir, `${hash}.gram`);
  const dict = path.join(dir, `${hash}.dict`);
  if (!existsSync(gram) || !existsSync(dict)) {
    const used = new Set(list.flatMap((p) => p.split(' ')));
    writeFileSync(dict, [...used].flatMap((w) => words.get(w)!).join('\n') + '\n');
    writeFileSync(gram, `#JSGF V1.0;\ngrammar policy;\npublic <utterance> = ${list.join(' | ')};\n`);
  }
  return { gram, dict, dropped };
}

export class PocketsphinxStt implements SttProvider {
  readonly name = 'pocketsphinx';
  /** A local engine decoding one turn at a time: a failure is final. */
  readonly resume = 'none' as const;
  readonly sampleRate = SAMPLE_RATE;
  private readonly grammar: Grammar | null;
  /** For peeks at a turn so far, at a pause and over the bot (buildGrammar's `partial`). */
  private readonly partialGrammar: Grammar | null;
  private readonly overlapGrammar: Grammar | null;
  private readonly binary: string;
  private readonly modelDir: string;

  constructor(private readonly opts: PocketsphinxOptions = {}) {
    this.binary = opts.binary ?? 'pocketsphinx_continuous';
    this.modelDir = opts.modelDir ?? '/usr/share/pocketsphinx/model/en-us';
    this.grammar = opts.phrases?.length ? buildGrammar(opts.phrases, this.modelDir) : null;
    this.partialGrammar = opts.phrases?.length ? buildGrammar(opts.phrases, this.modelDir, 'prefixes') : null;
    this.overlapGrammar = opts.phrases?.length ? buildGrammar(opts.phrases, this.modelDir, 'overlap') : null;
  }

  get grammarInfo(): Grammar | null {
    return this.grammar;
  }

  /** Live when it can be (a live decoder, a grammar, the binding present), else per turn. */
  async open(listener?: SttListener): Promise<SttSession> {
    const live = this.opts.live;
    if (live && (this.grammar || this.opts.liveOpenModel)) {
      try {
        return await this.openLive(live, listener);
      } catch (err) {
        if (!(err instanceof LiveUnavailableError)) throw err;
      }
    }
    return this.openPerTurn();
  }

  /** Whether sessions opened now decode live (for tests and the bench). */
  get decodesLive(): boolean {
    return !!this.opts.live && (!!this.grammar || !!this.opts.liveOpenModel) && this.opts.live.unavailableReason === null;
  }

  private decoderConfig(): DecoderConfig {
    const hmm = path.join(this.modelDir, 'en-us');
    const grammar = this.grammar;
    // Dither (seeded: the same audio, the same words): digital silence (padding, a quiet line) left the normalisation
    // a decoder carries from turn to turn skewed, and a later turn's quiet last word ("much" of "how much") was lost.
    const live = { dither: true, seed: 1, vad_postspeech: VAD_POSTSPEECH_FRAMES };
    if (!grammar) return { hmm, dict: path.join(this.modelDir, 'cmudict-en-us.dict'), lm: path.join(this.modelDir, 'en-us.lm.bin'), params: live };
    const params = { ...GRAMMAR_PARAMS, ...live };
    const overlap = this.overlapGrammar;
    return { hmm, dict: grammar.dict, jsgf: grammar.gram, params, overlap: overlap ? { hmm, dict: overlap.dict, jsgf: overlap.gram, params } : null };
  }

  /**
   * One decoder for the call, fed from each turn's speech start (with the pre-roll) as the audio arrives. The
   * decoder searches the whole-phrase grammar, so the end of a turn is forced to a whole phrase as the per-turn
   * decode is; its hypothesis mid-utterance is not (pocketsphinx's grammar search reports the best word path so
   * far), so a peek at a pause hears a caller who stopped mid-phrase as such, like the per-turn path's prefixes
   * grammar, without a second search (a prefixes grammar live would weaken the final words). Over
   * the bot a peek decodes the stretch (at most a few seconds) with the overlap grammar, which knows the
   * acknowledgements a whole-phrase grammar would force into some phrase.
   */
  private async openLive(live: LiveDecoder, listener?: SttListener): Promise<SttSession> {
    const decoder = await live.open(this.decoderConfig(), (err) => listener?.error?.(err));
    const pre = new PreRoll(samplesFor(PRE_ROLL_MS, SAMPLE_RATE));
    const maxTurn = samplesFor(MAX_TURN_MS, SAMPLE_RATE);
    let inTurn = false;
    let turnSamples = 0;
    const answer = async (text: Promise<string>, signal: AbortSignal): Promise<string> => {
      try {
        return await text;
      } catch (err) {
        if (signal.aborted) return '';
        throw err;
      }
    };
    return {
      push(pcm) {
        if (!inTurn) return pre.push(pcm);
        if (turnSamples >= maxTurn) return;
        decoder.feed(pcm);
        turnSamples += pcm.length;
      },
      speechStarted() {
        if (inTurn) return;
        inTurn = true;
        const audio = concatPcm([new Int16Array(samplesFor(PAD_MS, SAMPLE_RATE)), ...pre.take()]);
        turnSamples = audio.length;
        decoder.start(audio);
      },
      endOfTurn: async (signal) => {
        if (!inTurn) return '';
        inTurn = false;
        return answer(decoder.final(), signal);
      },
      // Final as the per-turn decode of the turn so far would be: the words of the audio heard until now.
      peek: async (signal, overlap) => {
        if (!inTurn) return { text: '', final: true };
        return { text: await answer(decoder.peek(overlap ?? false), signal), final: true };
      },
      // The partial hypothesis is the decoder's state: a second look at the decision costs nothing and has 150 ms
      // more of the pause (100 ms after its last word a turn's partial may still end a word early: "when is").
      peekAgainToDecide: true,
      discardTurn() {
        if (!inTurn) return;
        inTurn = false;
        decoder.drop();
      },
      close() {
        inTurn = false;
        pre.take();
        decoder.close();
      },
    };
  }

  private async openPerTurn(): Promise<SttSession> {
    const pre = new PreRoll(samplesFor(PRE_ROLL_MS, SAMPLE_RATE));
    let turn: Int16Array[] | null = null;
    let turnSamples = 0;
    let running: RunHandle | null = null;
    const spawner = this.opts.spawner ?? sharedSpawner();
    const maxTurn = samplesFor(MAX_TURN_MS, SAMPLE_RATE);
    const peeks = new Set<RunHandle>();
    /** Decodes `audio` (padded) with `grammar`; `track`: the run to kill on close. */
    const decodeTurn = async (audio: Int16Array[], grammar: Grammar | null, signal: AbortSignal, track: (run: RunHandle | null) => void): Promise<string> => {
      const pad = new Int16Array(samplesFor(PAD_MS, SAMPLE_RATE));
      // A file, not stdin: Node's child stdin is a socket, which pocketsphinx cannot fopen.
      const file = path.join(tmpdir(), `vp-turn-${process.pid}-${randomUUID()}.raw`);
      await writeFile(file, pcmToBytes(concatPcm([pad, ...audio, pad])));
      try {
        const timeoutMs = this.opts.timeoutMs ?? 15_000;
        const run = spawner.run(this.binary, this.args(file, grammar), { signal, timeoutMs });
        track(run);
        return await decode(run, signal, timeoutMs);
      } finally {
        track(null);
        await rm(file, { force: true });
      }
    };
    return {
      push(pcm) {
        if (turn) {
          if (turnSamples < maxTurn) {
            turn.push(pcm);
            turnSamples += pcm.length;
          }
          return;
        }
        pre.push(pcm);
      },
      speechStarted() {
        if (turn) return;
        turn = pre.take();
        turnSamples = turn.reduce((n, p) => n + p.length, 0);
      },
      endOfTurn: async (signal) => {
        const audio = turn ?? [];
        turn = null;
        turnSamples = 0;
        if (!audio.length) return '';
        return decodeTurn(audio, this.grammar, signal, (run) => (running = run));
      },
      // The turn so far, decoded whole: pocketsphinx's answer for it is final.
      peek: async (signal, overlap) => {
        if (!turn?.length) return { text: '', final: true };
        let mine: RunHandle | null = null;
        const text = await decodeTurn([...turn], (overlap ? this.overlapGrammar : this.partialGrammar) ?? this.grammar, signal, (run) => {
          if (mine) peeks.delete(mine);
          mine = run;
          if (run) peeks.add(run);
        });
        return { text, final: true };
      },
      discardTurn() {
        turn = null;
        turnSamples = 0;
      },
      close() {
        running?.kill();
        for (const run of peeks) run.kill();
        turn = null;
        pre.take();
      },
    };
  }

  private args(file: string, grammar: Grammar | null): string[] {
    // One turn is one utterance: the decoder's own VAD would cut it at a pause over half a second (its default),
    // and then decode the parts alone (against a grammar of whole phrases, nothing). Our VAD ends turns.
    const args = ['-infile', file, '-logfn', '/dev/null', '-hmm', path.join(this.modelDir, 'en-us'), '-vad_postspeech', String(VAD_POSTSPEECH_FRAMES)];
    if (grammar) args.push('-jsgf', grammar.gram, '-dict', grammar.dict, ...Object.entries(GRAMMAR_PARAMS).flatMap(([k, v]) => [`-${k}`, String(v)]));
    else args.push('-lm', path.join(this.modelDir, 'en-us.lm.bin'), '-dict', path.join(this.modelDir, 'cmudict-en-us.dict'));
    return args;
  }
}

async function decode(run: RunHandle, signal: AbortSignal, timeoutMs: number): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of run.stdout) chunks.push(chunk);
    const exit = await run.exited;
    if (exit.timedOut) throw new ProviderError('stt', 'timeout', `pocketsphinx took longer than ${timeoutMs} ms`, { retryable: false });
    if (signal.aborted) return '';
    if (exit.code !== 0) throw new ProviderError('stt', 'failed', `pocketsphinx exited with ${exit.code}: ${exit.stderr.slice(-200)}`);
    return Buffer.concat(chunks).toString('utf8').split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
  } catch (err) {
    if (!(err instanceof SpawnerError)) throw err;
    if (err.code === 'spawn_failed') throw new ProviderError('stt', 'unavailable', `pocketsphinx could not start: ${err.message}`, { retryable: false });
    throw new ProviderError('stt', 'failed', `pocketsphinx failed: ${err.message}`);
  } finally {
    run.kill();
  }
}
