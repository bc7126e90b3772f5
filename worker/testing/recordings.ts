// A call's recording as the suite's MinIO holds it: the WAV header and each channel (caller left, bot right).
import { Client } from 'minio';
import { bytesToPcm } from '#worker/audio/pcm.js';
import { parseWavHeader } from '#worker/audio/wav.js';

export function suiteMinio(): Client {
  const [host, port] = process.env.STORAGE_ENDPOINT!.split(':');
  return new Client({ endPoint: host!, port: Number(port), useSSL: false, accessKey: process.env.STORAGE_ACCESS_KEY!, secretKey: process.env.STORAGE_SECRET_KEY! });
}

export async function readRecording(key: string): Promise<{ info: NonNullable<ReturnType<typeof parseWavHeader>>; left: Int16Array; right: Int16Array }> {
  const chunks: Buffer[] = [];
  for await (const c of await suiteMinio().getObject('recordings', key)) chunks.push(c as Buffer);
  const wav = Buffer.concat(chunks);
  const info = parseWavHeader(wav);
  if (!info) throw new Error(`recording ${key} is not a WAV file`);
  const samples = bytesToPcm(wav.subarray(info.dataOffset));
  return { info, left: samples.filter((_, i) => i % 2 === 0), right: samples.filter((_, i) => i % 2 === 1) };
}
