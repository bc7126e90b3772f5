import { startCloudStandIn, type CloudStandIn } from '../testing/cloud.js';
import type { LlmChunk } from './llm.js';
import { OpenAiLlm } from './openai.js';

let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

const llm = (retries = 2) => new OpenAiLlm({ baseUrl: `${cloud.url}/v1`, apiKey: 'sk-local', model: 'gpt-4o-mini', temperature: 0.2, timeoutMs: 2000, retries });
async function collect(it: AsyncIterable<LlmChunk>): Promise<LlmChunk[]> {
  const out: LlmChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}
const text = (chunks: LlmChunk[]) => chunks.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('OpenAI-compatible chat completions', () => {
  it('streams the reply from SSE chunks and sends the documented request', async () => {
    const chunks = await collect(llm().generate([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'how much' }], new AbortController().signal));
    expect(text(chunks)).toBe('The open amount is forty dollars. Anything else?');
    expect(chunks.length).toBeGreaterThan(3);
    const req = cloud.requests[0]!;
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-local');
    expect(req.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, stream: true, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'how much' }] });
    expect(req.body.tools[0].function.name).toBe('end_call');
  });

  it('turns an end_call tool call into an end-of-call marker', async () => {
    cloud.chatEndCall = true;
    const chunks = await collect(llm().generate([{ role: 'user', content: 'bye' }], new AbortController().signal));
    expect(chunks[chunks.length - 1]).toEqual({ type: 'end_call' });
  });

  it('retries a stream that breaks mid-way and resumes without repeating words', async () => {
    cloud.faults = ['break_mid_stream'];
    const chunks = await collect(llm().generate([{ role: 'user', content: 'how much' }], new AbortController().signal));
    expect(text(chunks)).toBe('The open amount is forty dollars. Anything else?');
    expect(cloud.requests.length).toBe(2);
  });

  it('gives up after the retries with llm_unavailable', async () => {
    cloud.fault = 'break_mid_stream';
    await expect(collect(llm(2).generate([{ role: 'user', content: 'x' }], new AbortController().signal))).rejects.toMatchObject({ code: 'llm_unavailable' });
    expect(cloud.requests.length).toBe(3);
  });

  it('does not retry a rejected key', async () => {
    cloud.fault = 'http_401';
    await expect(collect(llm(2).generate([{ role: 'user', content: 'x' }], new AbortController().signal))).rejects.toMatchObject({ code: 'llm_rejected' });
    expect(cloud.requests.length).toBe(1);
  });
});
