import { concatPcm } from '../audio/pcm.js';
import { resample } from '../audio/resample.js';
import { recognise } from '../testing/audio.js';
import { startCloudStandIn, type CloudStandIn } from '../testing/cloud.js';
import { OpenAiTts } from './openai.js';

let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

const tts = () => new OpenAiTts({ baseUrl: `${cloud.url}/v1`, apiKey: 'sk-local', voice: 'alloy', speed: 1, timeoutMs: 5000, retries: 2 });
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

  it('resumes a broken stream at the sample where it broke', async () => {
    const whole = await collect(tts().synthesize('what amount', new AbortController().signal));
    cloud.faults = ['break_mid_stream'];
    const resumed = await collect(tts().synthesize('what amount', new AbortController().signal));
    expect(cloud.requests.length).toBe(3);
    expect(resumed).toEqual(whole);
  });

  it('fails with tts_unavailable once the retries are spent', async () => {
    cloud.fault = 'http_500';
    await expect(collect(tts().synthesize('x', new AbortController().signal))).rejects.toMatchObject({ code: 'tts_unavailable' });
    expect(cloud.requests.length).toBe(3);
  });
});
