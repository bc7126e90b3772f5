import { decide, ScriptedLlm, similarity } from './scripted.js';
import { LlmProcessor, SentenceSplitter, type LlmChunk } from './llm.js';
import type { Frame } from '../pipeline/frames.js';
import { llmStage } from '../testing/stages.js';
import { Pipeline } from '../pipeline/pipeline.js';

const policy = {
  intents: [
    { name: 'pay', examples: ['yes', 'i will pay'], reply: 'Thank you {{customer_name}}, goodbye.', end_call: true },
    { name: 'amount', examples: ['how much', 'what amount'], reply: 'You owe {{ amount_due }}.' },
  ],
  fallback: { reply: 'Sorry {{customer_name}}, say that again?' },
};
const vars = { customer_name: 'Sam', amount_due: '42 dollars' };

describe('scripted LLM', () => {
  it('matches intents by their example phrases and renders variables', () => {
    expect(decide(policy, 'How much?', vars)).toEqual({ intent: 'amount', reply: 'You owe 42 dollars.', endCall: false });
    expect(decide(policy, 'well i will pay tomorrow', vars)).toEqual({ intent: 'pay', reply: 'Thank you Sam, goodbye.', endCall: true });
  });

  it('falls back when nothing matches well enough', () => {
    expect(decide(policy, 'the weather is nice', vars)).toEqual({ intent: null, reply: 'Sorry Sam, say that again?', endCall: false });
  });

  it('scores exact, contained and partial matches in that order', () => {
    expect(similarity('how much', 'how much')).toBe(1);
    expect(similarity('so how much is it', 'how much')).toBe(0.9);
    expect(similarity('how many', 'how much')).toBe(0.5);
    expect(similarity('', 'how much')).toBe(0);
  });

  it('streams the reply and an end_call marker from the last user message', async () => {
    const llm = new ScriptedLlm(policy, vars);
    const chunks: LlmChunk[] = [];
    for await (const c of llm.generate([{ role: 'user', content: 'how much' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'yes' }], new AbortController().signal)) chunks.push(c);
    expect(chunks).toEqual([{ type: 'text', text: 'Thank you Sam, goodbye.' }, { type: 'end_call' }]);
  });
});

describe('SentenceSplitter', () => {
  it('releases a sentence once the text after its stop begins', () => {
    const s = new SentenceSplitter();
    expect(s.push('Hello there')).toEqual([]);
    expect(s.push('. How are')).toEqual(['Hello there.']);
    expect(s.push(' you? Fine')).toEqual(['How are you?']);
    expect(s.flush()).toEqual(['Fine']);
  });
});

describe('LlmProcessor', () => {
  it('runs the scripted LLM, which declares resume chars (the same messages give the same reply)', async () => {
    const llm = new ScriptedLlm({ intents: [], fallback: { reply: 'Sorry {{customer_name}}. Again?' } }, vars);
    expect(llm.resume).toBe('chars');
    const r = await llmStage(llm, 'what');
    expect(r).toMatchObject({ error: null, sentences: ['Sorry Sam.', 'Again?'] });
  });


  it('sends the whole text of a greeting and of a reply to the TTS, with or without a final stop', async () => {
    const out: Frame[] = [];
    const p = new Pipeline([new LlmProcessor(new ScriptedLlm({ intents: [], fallback: { reply: 'Sorry {{customer_name}}' } }, vars), '')], {
      downstream: (f) => out.push(f),
    });
    p.push({ kind: 'say', text: 'Hello Sam' });
    p.push({ kind: 'say', text: 'Hi. How are you' });
    p.push({ kind: 'transcript', role: 'user', text: 'what', final: true });
    await p.idle();
    const texts = out.flatMap((f) => (f.kind === 'text' ? [f.text] : []));
    expect(texts).toEqual(['Hello Sam', 'Hi.', 'How are you', 'Sorry Sam']);
    expect(out.filter((f) => f.kind === 'response_end')).toHaveLength(3);
  });
});
