// Test audio made by the real tools: espeak-ng speaks, sox converts (independent of the worker's own
// resampler), pocketsphinx recognises.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bytesToPcm, pcmToBytes } from '../audio/pcm.js';

/** PCM16 mono speech of `text` at `rate`, with `padMs` of silence after it. */
export function speech(text: string, rate = 16000, opts: { wpm?: number; padMs?: number } = {}): Int16Array {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', String(opts.wpm ?? 150), '--stdout', text], { maxBuffer: 64 << 20 });
  const raw = execFileSync('sox', ['-D', '-t', 'wav', '-', '-t', 'raw', '-r', String(rate), '-b', '16', '-e', 'signed-integer', '-c', '1', '-'], {
    input: wav,
    maxBuffer: 64 << 20,
  });
  const pcm = bytesToPcm(raw);
  const pad = new Int16Array(Math.round(((opts.padMs ?? 0) * rate) / 1000));
  const out = new Int16Array(pcm.length + pad.length);
  out.set(pcm);
  return out;
}

export const silence = (ms: number, rate = 16000): Int16Array => new Int16Array(Math.round((ms * rate) / 1000));

/** What pocketsphinx hears in `pcm`, constrained to `phrases` (a JSGF grammar of them). */
export function recognise(pcm: Int16Array, rate: number, phrases: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'vp-recognise-'));
  const raw16 = execFileSync('sox', ['-D', '-t', 'raw', '-r', String(rate), '-b', '16', '-e', 'signed-integer', '-c', '1', '-', '-t', 'raw', '-r', '16000', '-'], {
    input: pcmToBytes(pcm),
    maxBuffer: 64 << 20,
  });
  const norm = (p: string) => p.toLowerCase().replace(/[^a-z' ]+/g, ' ').replace(/\s+/g, ' ').trim();
  const gram = path.join(dir, 'g.gram');
  writeFileSync(gram, `#JSGF V1.0;\ngrammar t;\npublic <u> = ${[...new Set(phrases.map(norm))].join(' | ')};\n`);
  const rawFile = path.join(dir, 'audio.raw');
  writeFileSync(rawFile, raw16);
  const r = spawnSync('pocketsphinx_continuous', ['-infile', rawFile, '-logfn', '/dev/null', '-jsgf', gram, '-beam', '1e-80', '-pbeam', '1e-80', '-wbeam', '1e-60'], { maxBuffer: 16 << 20 });
  rmSync(dir, { recursive: true, force: true });
  return r.stdout.toString().split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
}
