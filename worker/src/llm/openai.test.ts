import { startCloudStandIn, type CloudStandIn } from '../../testing/cloud.js';
import { llmStage } from '../../testing/stages.js';
import { retryPolicy } from '../providers/retry.js';
import type { LlmChunk, LlmProvider } from './llm.js';
import { OpenAiLlm } from './openai.js';

let cloud: CloudStandIn;
beforeAll(async () => {
  cloud = await startCloudStandIn();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

const llm = () => new OpenAiLlm({ baseUrl: `${cloud.url}/v1`, apiKey: 'sk-local', model: 'gpt-4o-mini', temperature: 0.2, timeoutMs: 2000 });
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

  it('hands on an end_call tool call whole; the stage ends the call after the reply, with no tool round', async () => {
    cloud.chatEndCall = true;
    const chunks = await collect(llm().generate([{ role: 'user', content: 'bye' }], new AbortController().signal));
    expect(chunks[chunks.length - 1]).toEqual({ type: 'tool_calls', calls: [{ id: 'call_end', type: 'function', function: { name: 'end_call', arguments: '' } }] });
    cloud.chatEndCall = true;
    const r = await llmStage(llm(), 'bye');
    expect(r.frames[r.frames.length - 1]).toEqual({ kind: 'response_end', endCall: true });
    expect(cloud.chats).toHaveLength(2); // one request each: hanging up needs no second round
  });

  it('declares resume chars: a stream broken mid-sentence is retried and the stage passes on each sentence once, whole', async () => {
    expect(llm().resume).toBe('chars');
    // A break halfway through the words: inside the second sentence, after the first went on.
    cloud.chatReply = 'The open amount is forty dollars. It is due on the first of next month. Anything else?';
    cloud.faults = ['break_mid_stream'];
    const attempts: string[] = [];
    const inner = llm();
    const recorded: LlmProvider = {
      name: inner.name,
      resume: inner.resume,
      async *generate(messages, signal) {
        const n = attempts.push('') - 1;
        for await (const c of inner.generate(messages, signal)) {
          if (c.type === 'text') attempts[n] += c.text;
          yield c;
        }
      },
    };
    const r = await llmStage(recorded, 'how much');
    expect(attempts[0]).toMatch(/^The open amount is forty dollars\. It is \S/); // broke inside the second sentence
    expect(attempts[1]).toBe(cloud.chatReply);
    expect(r.error).toBeNull();
    expect(r.sentences).toEqual(['The open amount is forty dollars.', 'It is due on the first of next month.', 'Anything else?']);
    expect(cloud.requests.length).toBe(2);
    expect(cloud.requests[1]!.body.messages).toEqual(cloud.requests[0]!.body.messages);
  });

  it('a single attempt fails with llm_stream_broken; the stage gives up after the retries with llm_unavailable', async () => {
    cloud.fault = 'break_mid_stream';
    await expect(collect(llm().generate([{ role: 'user', content: 'x' }], new AbortController().signal))).rejects.toMatchObject({ code: 'llm_stream_broken', retryable: true });
    cloud.requests.length = 0;
    const r = await llmStage(llm(), 'x', retryPolicy(2));
    expect(r.error).toMatchObject({ code: 'llm_unavailable', message: expect.stringContaining('failed after 3 attempts') });
    expect(r.sentences).toEqual([]); // each attempt broke inside the first sentence: no half sentence went on
    expect(cloud.requests.length).toBe(3);
  });

  it('does not retry a rejected key: llm_auth', async () => {
    cloud.fault = 'http_401';
    const r = await llmStage(llm(), 'x');
    expect(r.error).toMatchObject({ code: 'llm_auth', message: expect.stringContaining('HTTP 401') });
    expect(cloud.requests.length).toBe(1);
  });

  it('retries a 429 (rate limited) before the first token', async () => {
    cloud.faults = ['http_429'];
    const r = await llmStage(llm(), 'how much');
    expect(r.error).toBeNull();
    expect(r.sentences).toEqual(['The open amount is forty dollars.', 'Anything else?']);
    expect(cloud.requests.length).toBe(2);
  });
});
