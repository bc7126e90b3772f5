import { concatPcm } from '../audio/pcm.js';
import { resample } from '../audio/resample.js';
import { recognise } from '../../testing/audio.js';
import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import { ttsStage } from '../../testing/stages.js';
import { OpenAiTts } from './openai.js';

let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

const tts = () => new OpenAiTts({ baseUrl: `${cloud.url}/v1`, apiKey: 'sk-local', voice: 'alloy', speed: 1, timeoutMs: 5000 });
async function collect(it: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const out: Int16Array[] = [];
  for await (const c of it) out.push(c);
  return concatPcm(out);
}

describe('OpenAI streaming speech', () => {
  it('streams 24 kHz PCM for the documented request', async () => {
    const pcm = await collect(tts().synthesize('stop calling', new AbortController().signal));
    expect(cloud.requests[0]).toMatchObject({ path: '/v1/audio/speech', body: { model: 'tts-1', input: 'stop calling', voice: 'alloy', response_format: 'pcm', speed: 1 } });
    expect(cloud.requests[0]!.headers.authorization).toBe('Bearer sk-local');
    expect(recognise(resample(pcm, 24000, 16000), 16000, ['stop calling', 'how much'])).toBe('stop calling');
  });

  it('declares resume none: a stream broken after audio is not retried, nothing is spliced; the call gets tts_stream_broken', async () => {
    expect(tts().resume).toBe('none');
    const whole = await collect(tts().synthesize('what amount', new AbortController().signal));
    cloud.requests.length = 0;
    cloud.faults = ['break_mid_stream'];
    const r = await ttsStage(tts(), 'what amount');
    expect(cloud.requests.length).toBe(1);
    expect(r.error).toMatchObject({ code: 'tts_stream_broken', fatal: true, message: expect.stringContaining('not retried') });
    expect(r.audio.length).toBeGreaterThan(0);
    expect(r.audio.length).toBeLessThan(whole.length);
    expect(r.audio).toEqual(whole.subarray(0, r.audio.length)); // what was heard, once, and nothing after it
  });

  it('retries a failure before the first audio, from the start of the sentence', async () => {
    const whole = await collect(tts().synthesize('what amount', new AbortController().signal));
    cloud.requests.length = 0;
    cloud.faults = ['http_500'];
    const r = await ttsStage(tts(), 'what amount');
    expect(cloud.requests.length).toBe(2);
    expect(r.error).toBeNull();
    expect(r.audio).toEqual(whole);
  });

  it('fails with tts_unavailable once the retries are spent', async () => {
    cloud.fault = 'http_500';
    await expect(collect(tts().synthesize('x', new AbortController().signal))).rejects.toMatchObject({ name: 'ProviderError', code: 'tts_unavailable', status: 500 });
    expect(cloud.requests.length).toBe(1); // one attempt: the provider never retries
    cloud.requests.length = 0;
    expect((await ttsStage(tts(), 'x')).error).toMatchObject({ code: 'tts_unavailable', message: expect.stringContaining('failed after 3 attempts') });
    expect(cloud.requests.length).toBe(3);
  });

  it('fails at once with tts_auth on a rejected key', async () => {
    cloud.fault = 'http_401';
    expect((await ttsStage(tts(), 'x')).error).toMatchObject({ code: 'tts_auth', message: expect.stringContaining('HTTP 401') });
    expect(cloud.requests.length).toBe(1);
  });
});
