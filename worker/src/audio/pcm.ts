// PCM16LE helpers. Audio moves through the pipeline as Int16Array views of mono PCM16.

/** A copy of `buf` as Int16 samples (copied so odd byte offsets and pooled buffers are safe). */
export function bytesToPcm(buf: Uint8Array): Int16Array {
  const samples = Math.floor(buf.byteLength / 2);
  const out = new Int16Array(samples);
  const view = new DataView(buf.buffer, buf.byteOffset, samples * 2);
  for (let i = 0; i < samples; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** PCM16LE from a byte stream whose chunks need not end on a sample boundary: an odd byte carries over. */
export class PcmBytes {
  private odd: Uint8Array | null = null;
  push(chunk: Uint8Array): Int16Array {
    let bytes = chunk;
    if (this.odd) {
      bytes = new Uint8Array(this.odd.length + chunk.length);
      bytes.set(this.odd);
      bytes.set(chunk, this.odd.length);
      this.odd = null;
    }
    if (bytes.length % 2) {
      this.odd = bytes.slice(bytes.length - 1);
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    return bytesToPcm(bytes);
  }
}

export function pcmToBytes(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}

export function concatPcm(parts: Int16Array[]): Int16Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Int16Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const samplesFor = (ms: number, sampleRate: number): number => Math.round((ms * sampleRate) / 1000);

/** Splits a stream of arbitrary chunks into fixed-size frames (the VAD and pacing need fixed frames). */
export class Rechunker {
  private pending: Int16Array = new Int16Array(0);
  constructor(readonly frameSamples: number) {}
  push(pcm: Int16Array): Int16Array[] {
    const all = this.pending.length ? concatPcm([this.pending, pcm]) : pcm;
    const frames: Int16Array[] = [];
    let at = 0;
    for (; at + this.frameSamples <= all.length; at += this.frameSamples) frames.push(all.slice(at, at + this.frameSamples));
    this.pending = all.slice(at);
    return frames;
  }
  /** The remainder padded with silence to a whole frame, or nothing. */
  flush(): Int16Array[] {
    if (!this.pending.length) return [];
    const last = new Int16Array(this.frameSamples);
    last.set(this.pending);
    this.pending = new Int16Array(0);
    return [last];
  }
  clear(): void {
    this.pending = new Int16Array(0);
  }
}

/** Root mean square level of a frame, 0..32768. */
export function rms(pcm: Int16Array): number {
  if (!pcm.length) return 0;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return Math.sqrt(sum / pcm.length);
}
