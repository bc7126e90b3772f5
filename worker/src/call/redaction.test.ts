// A call's redaction, unit by unit: its log lines (the string fields of each, nested or an error's message),
// its actions, and the frames the LLM stage hears with redact_llm. The whole path on real services is
// redaction.test.ts.
import { Writable } from 'node:stream';
import type { CallAction } from '@voice-platform/schemas';
import { createLogger } from '../core/logger.js';
import { CallRedaction } from './redaction.js';

const CARD = '4111111111111111';

function capture(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, log: createLogger('info', sink) };
}

describe('CallRedaction', () => {
  it("masks every string field of the call's log lines, its bindings kept, other fields untouched", () => {
    const { lines, log } = capture();
    const call = new CallRedaction({ entities: ['card_number', 'email'] }).logger(log.child({ call_id: 'c1' }));
    call.info({ text: `card ${CARD}`, nested: { args: [CARD, 'a@b.io'] }, n: 3, err: `bad ${CARD}` }, 'tool ran');
    call.child({ tool: 'x' }).warn({ err: new Error(`refused ${CARD}`) }, 'pipeline error');
    const [first, second] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ call_id: 'c1', msg: 'tool ran', text: 'card [card_number]', nested: { args: ['[card_number]', '[email]'] }, n: 3, err: 'bad [card_number]' });
    expect(second).toMatchObject({ call_id: 'c1', tool: 'x', msg: 'pipeline error' });
    expect(JSON.stringify(second)).toContain('refused [card_number]');
    expect(lines.join('')).not.toContain(CARD);
  });

  it('leaves the logger as it is without entities (a bot or config from before the setting)', () => {
    const { lines, log } = capture();
    new CallRedaction(undefined).logger(log).info({ text: CARD }, 'x');
    expect(lines.join('')).toContain(CARD);
    expect(new CallRedaction({ entities: [], redact_llm: true }).llm).toBe(false);
  });

  it("masks an action's arguments, result and error", () => {
    const a: CallAction = { type: 'tool', name: 'take_card', at: new Date(0).toISOString(), duration_ms: 5, status: 'failed', arguments: { card: CARD, n: 1 }, result: `{"got":"${CARD}"}`, error: `no ${CARD}` };
    expect(new CallRedaction({ entities: ['card_number'] }).action(a)).toEqual({ ...a, arguments: { card: '[card_number]', n: 1 }, result: '{"got":"[card_number]"}', error: 'no [card_number]' });
    expect(new CallRedaction({ entities: ['card_number'] }).action({ ...a, result: null, error: null, arguments: undefined })).toEqual({ ...a, result: null, error: null, arguments: undefined });
  });
});
