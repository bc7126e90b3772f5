// Offline TTS with espeak-ng (Debian package). The WAV it writes on --stdout is streamed: audio is
// yielded as espeak-ng produces it, and a barge-in kills the process. The process is started through
// the worker's spawner (proc/spawner.ts), off the event loop that paces the calls' audio.
// Resume: `none` (a local engine: a failure is final; the stage retries nothing it failed at).
import { PcmBytes } from '../audio/pcm.js';
import { parseWavHeader } from '../audio/wav.js';
import { sharedSpawner, SpawnerError } from '../proc/spawner.js';
import type { ProcessRunner } from '../proc/scheduler.js';
import { ProviderError } from '../providers/errors.js';
import type { TtsProvider } from './tts.js';

export interface EspeakOptions {
  binary?: string;
  voice?: string;
  /** Multiplier of the base speaking rate (the bot's voice.speed). */
  speed?: number;
  timeoutMs?: number;
  /** Starts the espeak-ng processes; default: the process-wide one. */
  spawner?: ProcessRunner;
}

/** espeak-ng's default voices synthesise at 22050 Hz. */
const ESPEAK_RATE = 22050;
const BASE_WPM = 160;

export class EspeakTts implements TtsProvider {
  readonly name = 'espeak-ng';
  readonly sampleRate = ESPEAK_RATE;
  readonly resume = 'none' as const;
  constructor(private readonly opts: EspeakOptions = {}) {}

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    const wpm = Math.max(80, Math.min(450, Math.round(BASE_WPM * (this.opts.speed ?? 1))));
    // Text on stdin, never as an argument: a reply starting with '-' must not become an option.
    const run = (this.opts.spawner ?? sharedSpawner()).run(this.opts.binary ?? 'espeak-ng', ['-v', this.opts.voice ?? 'en-us', '-s', String(wpm), '--stdout'], {
      stdin: text.replace(/\s+/g, ' ') + '\n',
      signal,
      timeoutMs: this.opts.timeoutMs ?? 20_000,
    });
    let exitedCleanly = false;
    try {
      let head = Buffer.alloc(0);
      let dataStarted = false;
      const pcm = new PcmBytes();
      for await (const chunk of run.stdout) {
        if (signal.aborted) return;
        let bytes = chunk;
        if (!dataStarted) {
          head = Buffer.concat([head, chunk]);
          const info = parseWavHeader(head);
          if (!info) continue;
          if (info.sampleRate !== ESPEAK_RATE || info.channels !== 1 || info.bitsPerSample !== 16) {
            throw new ProviderError('tts', 'failed', `espeak-ng wrote ${info.sampleRate} Hz ${info.channels} ch ${info.bitsPerSample} bit`);
          }
          dataStarted = true;
          bytes = head.subarray(info.dataOffset);
        }
        const samples = pcm.push(bytes);
        if (samples.length) yield samples;
      }
      const exit = await run.exited;
      exitedCleanly = true;
      if (signal.aborted) return;
      if (exit.code !== 0) throw new ProviderError('tts', 'failed', `espeak-ng exited with ${exit.code}: ${exit.stderr.slice(-200)}`);
    } catch (err) {
      if (!(err instanceof SpawnerError)) throw err;
      if (err.code === 'spawn_failed') throw new ProviderError('tts', 'unavailable', `espeak-ng could not start: ${err.message}`, { retryable: false });
      throw new ProviderError('tts', 'failed', `espeak-ng failed: ${err.message}`);
    } finally {
      // The consumer stopped early (barge-in, error): the process must not run on.
      if (!exitedCleanly) run.kill();
    }
  }
}
