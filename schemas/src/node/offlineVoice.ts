// The offline voice and ear shared by the worker's tests and the backend's bot-test caller (docs/design.md §17):
// espeak-ng speaks, sox converts (independent of the worker's own resampler), pocketsphinx recognises. PCM in
// and out is 16-bit little-endian mono bytes, so each side keeps its own sample types.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** PCM16LE mono speech of `text` at `rate`. */
export function speechBytes(text: string, rate = 16000, opts: { wpm?: number; voice?: string } = {}): Buffer {
  const wav = execFileSync('espeak-ng', ['-v', opts.voice ?? 'en-us', '-s', String(opts.wpm ?? 150), '--stdout', text], { maxBuffer: 64 << 20 });
  return execFileSync('sox', ['-D', '-t', 'wav', '-', '-t', 'raw', '-r', String(rate), '-b', '16', '-e', 'signed-integer', '-c', '1', '-'], {
    input: wav,
    maxBuffer: 64 << 20,
  });
}

/** What pocketsphinx hears in `pcm` (PCM16LE at `rate`), constrained to `phrases` (a JSGF grammar of them). */
export function recogniseBytes(pcm: Uint8Array, rate: number, phrases: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'vp-recognise-'));
  const raw16 = execFileSync('sox', ['-D', '-t', 'raw', '-r', String(rate), '-b', '16', '-e', 'signed-integer', '-c', '1', '-', '-t', 'raw', '-r', '16000', '-'], {
    input: pcm,
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
