import { CallRecorder, recordingKey } from './recording.js';

const RATE = 16000;
const tone = (samples: number, value: number) => new Int16Array(samples).fill(value);

describe('CallRecorder', () => {
  it('places caller left and bot right on the call timeline, padded to the end of the call', () => {
    const rec = new CallRecorder(RATE, 1_000);
    rec.writeUser(tone(320, 100), 1_020); // the chunk that arrives at 20 ms started at 0
    rec.writeBot(tone(160, -200), 1_500); // bot audio at 500 ms
    rec.writeUser(tone(320, 300), 2_040); // after a gap: silence in between
    const { wav, durationSeconds } = rec.finish(3_000);

    expect(durationSeconds).toBe(2);
    expect(wav.subarray(0, 4).toString()).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(2); // channels
    expect(wav.readUInt32LE(24)).toBe(RATE);
    const data = wav.subarray(44);
    expect(data.length).toBe(2 * RATE * 4);
    const left = (i: number) => data.readInt16LE(i * 4);
    const right = (i: number) => data.readInt16LE(i * 4 + 2);
    expect([left(0), left(319), left(320), left(8000)]).toEqual([100, 100, 0, 0]);
    expect([right(7999), right(8000), right(8159), right(8160)]).toEqual([0, -200, -200, 0]);
    expect([left(16319), left(16320), left(16639), left(16640)]).toEqual([0, 300, 300, 0]);
    expect(right(RATE * 2 - 1)).toBe(0);
  });

  it('keys recordings by the UTC day the call started', () => {
    expect(recordingKey('abc', new Date('2026-01-02T23:59:59Z'))).toBe('recordings/2026/01/02/abc.wav');
  });
});
