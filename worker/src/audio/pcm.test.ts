import { concatPcm, PcmBytes, pcmToBytes } from './pcm.js';

describe('PcmBytes', () => {
  it('reassembles samples split across chunks of any size', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234, -4321]);
    const bytes = pcmToBytes(samples);
    for (const size of [1, 3, 5, 14]) {
      const reader = new PcmBytes();
      const out: Int16Array[] = [];
      for (let at = 0; at < bytes.length; at += size) out.push(reader.push(bytes.subarray(at, at + size)));
      expect(Array.from(concatPcm(out))).toEqual(Array.from(samples));
    }
  });
});
