// Offline STT with CMU pocketsphinx (Debian `pocketsphinx`, model `pocketsphinx-en-us`). Each turn's
// audio (from a little before the VAD's speech start) is decoded by `pocketsphinx_continuous`. When
// the bot has a policy, recognition is constrained by a JSGF grammar of the policy's example phrases
// with a dictionary of just their words: small, fast, and far more accurate than the open language model.
// The process is started through the worker's spawner (proc/spawner.ts), off the calls' event loop.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { concatPcm, pcmToBytes, samplesFor } from '../audio/pcm.js';
import { sharedSpawner, SpawnerError, type RunHandle } from '../proc/spawner.js';
import type { ProcessRunner } from '../proc/scheduler.js';
import { ProviderError } from '../providers/errors.js';
import type { SttProvider, SttSession } from './stt.js';

export interface PocketsphinxOptions {
  binary?: string;
  modelDir?: string;
  /** Phrases the caller is expected to say; builds the grammar. Empty: the open language model. */
  phrases?: string[];
  timeoutMs?: number;
  /** Starts the pocketsphinx processes; default: the process-wide one. */
  spawner?: ProcessRunner;
}

const SAMPLE_RATE = 16000;
const PRE_ROLL_MS = 400;
const PAD_MS = 300;
const MAX_TURN_MS = 30_000;
/** Silence (10 ms frames) the decoder keeps inside an utterance: past the longest end-of-turn silence a bot may set (5 s). */
const VAD_POSTSPEECH_FRAMES = 600;

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

  async open(): Promise<SttSession> {
    const preRoll: Int16Array[] = [];
    let preRollSamples = 0;
    let turn: Int16Array[] | null = null;
    let turnSamples = 0;
    let running: RunHandle | null = null;
    const spawner = this.opts.spawner ?? sharedSpawner();
    const maxPre = samplesFor(PRE_ROLL_MS, SAMPLE_RATE);
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
        preRoll.push(pcm);
        preRollSamples += pcm.length;
        while (preRoll.length > 1 && preRollSamples - preRoll[0]!.length >= maxPre) preRollSamples -= preRoll.shift()!.length;
      },
      speechStarted() {
        if (turn) return;
        turn = preRoll.splice(0);
        turnSamples = preRollSamples;
        preRollSamples = 0;
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
        preRoll.length = 0;
      },
    };
  }

  private args(file: string, grammar: Grammar | null): string[] {
    // One turn is one utterance: the decoder's own VAD would cut it at a pause over half a second (its default),
    // and then decode the parts alone (against a grammar of whole phrases, nothing). Our VAD ends turns.
    const args = ['-infile', file, '-logfn', '/dev/null', '-hmm', path.join(this.modelDir, 'en-us'), '-vad_postspeech', String(VAD_POSTSPEECH_FRAMES)];
    // Wide beams: a small grammar is cheap to search, and the default beams lose whole phrases.
    if (grammar) args.push('-jsgf', grammar.gram, '-dict', grammar.dict, '-beam', '1e-80', '-pbeam', '1e-80', '-wbeam', '1e-60');
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
