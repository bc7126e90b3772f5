// The tools part of the bot form: stored tools ↔ form text ↔ API body.
import { BOT_DEFAULTS, type Bot } from '@voice-platform/schemas/bot.js';
import { botToForm, emptyTool, formToBody, parseParameters, toolToBody, toolToForm } from './botForm.js';

const params = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

function storedBot(tools: Bot['tools']): Bot {
  return { ...BOT_DEFAULTS, id: 'b1', name: 'Shop', tools, created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z' };
}

describe('bot tools in the form', () => {
  it('a new bot has no tools, and sends an empty list', () => {
    const form = botToForm();
    expect(form.tools).toEqual([]);
    expect(formToBody(form).tools).toEqual([]);
  });

  it('shows stored parameters as pretty JSON and an absent description or parameters as empty text', () => {
    expect(toolToForm({ name: 'lookup_order', description: 'Find an order', parameters: params })).toEqual({
      name: 'lookup_order',
      description: 'Find an order',
      parameters: JSON.stringify(params, null, 2),
    });
    expect(toolToForm({ name: 'hang_up' } as Bot['tools'][number])).toEqual({ name: 'hang_up', description: '', parameters: '' });
  });

  it('round-trips stored tools unchanged', () => {
    const tools = [
      { name: 'lookup_order', description: 'Find an order', parameters: params },
      { name: 'transfer-to-agent', description: '' },
    ];
    expect(formToBody(botToForm(storedBot(tools))).tools).toEqual(tools);
  });

  it('trims the name, keeps the description as typed, and leaves out blank parameters', () => {
    expect(toolToBody({ name: '  lookup_order ', description: ' Find it ', parameters: '  \n ' })).toEqual({ name: 'lookup_order', description: ' Find it ' });
    expect(toolToBody({ ...emptyTool(), name: 'x', parameters: '{}' })).toEqual({ name: 'x', description: '', parameters: {} });
  });

  it('keeps parameters that are not JSON as text, so the schema names the field', () => {
    expect(parseParameters('{"type": "object"')).toBe('{"type": "object"');
    expect(parseParameters(' [1, 2] ')).toEqual([1, 2]);
    expect(parseParameters('')).toBeUndefined();
  });
});
