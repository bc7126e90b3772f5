// RIFF/WAVE PCM16: the recording format, and the container espeak-ng writes on --stdout.

export function wavHeader(sampleRate: number, channels: number, dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Offset of the first sample byte. */
  dataOffset: number;
  dataBytes: number;
}

/** Parses the chunks up to `data`; returns null while `buf` is too short to tell. */
export function parseWavHeader(buf: Buffer): WavInfo | null {
  if (buf.length < 12) return null;
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE stream');
  let at = 12;
  let fmt: Omit<WavInfo, 'dataOffset' | 'dataBytes'> | null = null;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'data') {
      if (!fmt) throw new Error('WAVE data before fmt');
      return { ...fmt, dataOffset: at + 8, dataBytes: size };
    }
    if (at + 8 + size > buf.length) return null;
    if (id === 'fmt ') {
      fmt = { channels: buf.readUInt16LE(at + 10), sampleRate: buf.readUInt32LE(at + 12), bitsPerSample: buf.readUInt16LE(at + 22) };
    }
    at += 8 + size + (size % 2);
  }
  return null;
}
