import { decide, keypadTurn, ScriptedLlm, similarity } from './scripted.js';
import { LlmProcessor, SentenceSplitter, type LlmChunk } from './llm.js';
import type { Frame } from '../pipeline/frames.js';
import { llmStage } from '../../testing/stages.js';
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

describe('the scripted policy acts (docs/design.md §9)', () => {
  const acting = {
    intents: [
      {
        name: 'pay',
        examples: ['i will pay'],
        action: { tool: 'record_promise', arguments: { customer: '{{customer_name}}', amount: '{{amount_due}}' } },
        reply: 'Thank you {{customer_name}}, your reference is {{result.reference}}.',
        on_error_reply: 'Sorry {{customer_name}}, I could not note that.',
        end_call: true,
      },
      { name: 'menu', examples: [], dtmf: '1#', reply: 'You pressed {{digits}}.' },
    ],
    fallback: { reply: 'Sorry, again?' },
  };
  const vars = { customer_name: 'Sam', amount_due: '42' };
  const all = async (it: AsyncIterable<unknown>) => {
    const out: unknown[] = [];
    for await (const c of it) out.push(c);
    return out;
  };
  const user = (content: string) => ({ role: 'user' as const, content });

  it('an intent with an action first calls its tool with the arguments rendered, then says the reply with the result', async () => {
    const llm = new ScriptedLlm(acting, vars);
    const first = await all(llm.generate([user('well i will pay')], new AbortController().signal, { toolChoice: 'auto' }));
    expect(first).toEqual([{ type: 'tool_calls', calls: [{ id: 'scripted_1', type: 'function', function: { name: 'record_promise', arguments: '{"customer":"Sam","amount":"42"}' } }] }]);
    const call = (first[0] as { calls: Array<{ id: string }> }).calls[0]!;
    const history = [user('well i will pay'), { role: 'assistant' as const, content: null, tool_calls: (first[0] as { calls: never[] }).calls }];
    const ok = await all(llm.generate([...history, { role: 'tool', tool_call_id: call.id, content: '{"reference":"PTP-7","nested":{"a":1}}' }], new AbortController().signal));
    expect(ok).toEqual([{ type: 'text', text: 'Thank you Sam, your reference is PTP-7.' }, { type: 'end_call' }]);
    const failed = await all(llm.generate([...history, { role: 'tool', tool_call_id: call.id, content: '{"error":"timeout"}' }], new AbortController().signal));
    expect(failed).toEqual([{ type: 'text', text: 'Sorry Sam, I could not note that.' }, { type: 'end_call' }]);
    // Without on_error_reply a failed action says the fallback.
    const bare = new ScriptedLlm({ ...acting, intents: [{ ...acting.intents[0]!, on_error_reply: undefined }] }, vars);
    expect(await all(bare.generate([...history, { role: 'tool', tool_call_id: call.id, content: 'not json' }], new AbortController().signal))).toEqual([{ type: 'text', text: 'Sorry, again?' }]);
  });

  it('a dtmf intent matches exactly the keys the caller pressed, and {{digits}} names them', () => {
    expect(decide(acting, keypadTurn('1#'), vars)).toEqual({ intent: 'menu', reply: 'You pressed 1#.', endCall: false });
    expect(decide(acting, keypadTurn('12#'), vars)).toEqual({ intent: null, reply: 'Sorry, again?', endCall: false });
    // Spoken words never select it (it has no examples).
    expect(decide(acting, 'one pound', vars).intent).toBeNull();
  });
});
