// The console's validation against the shared schemas, and the proof that it is the backend's rule set:
// the same bodies go through the backend's own bot builder and must fail on the same fields.
import { BOT_DEFAULTS, type BotCreate } from '@voice-platform/schemas/bot.js';
import { newBotDoc } from '../../../backend/src/bots/routes.js';
import { ApiError as BackendError } from '../../../backend/src/core/errors.js';
import { readableMessage } from './errorMessage.js';
import { botToForm, emptyIntent, emptyTool, formToBody, toolToBody } from './botForm.js';
import { detailFieldErrors, errorFor, friendlyMessage, validateApiKeyCreate, validateBot } from './validation.js';

const now = new Date('2025-03-10T12:00:00.000Z');

describe('validateApiKeyCreate', () => {
  it('accepts a name with or without an expiry in the future', () => {
    expect(validateApiKeyCreate({ name: 'CRM' }, now)).toEqual({});
    expect(validateApiKeyCreate({ name: 'CRM', expires_at: null }, now)).toEqual({});
    expect(validateApiKeyCreate({ name: 'CRM', expires_at: '2025-03-11T00:00:00.000Z' }, now)).toEqual({});
  });

  it('names each problem on its field', () => {
    expect(validateApiKeyCreate({ name: '' }, now)).toEqual({ name: 'This field is required.' });
    expect(validateApiKeyCreate({ name: 'x'.repeat(201) }, now)).toEqual({ name: 'Must be at most 200 characters.' });
    expect(validateApiKeyCreate({ name: 'CRM', expires_at: '2025-03-10T11:59:59.000Z' }, now)).toEqual({ expires_at: 'Must be in the future.' });
    expect(validateApiKeyCreate({ name: 'CRM', expires_at: 'tomorrow' }, now)).toEqual({ expires_at: 'Must be a valid date and time.' });
  });
});

function validBot(): BotCreate {
  const form = botToForm();
  form.name = 'Reminder';
  form.greeting = 'Hello {{customer_name}}';
  form.variables = [{ name: 'customer_name', required: true, description: 'who we call' }];
  form.usePolicy = true;
  form.intents = [{ ...emptyIntent(), name: 'yes', examples: 'yes\n\n sure ', reply: 'Great, {{customer_name}}.', end_call: true }];
  form.fallback = { reply: 'Sorry?', end_call: false };
  form.tools = [{ ...emptyTool(''), name: 'lookup_order', description: 'Find an order', parameters: '{"type": "object", "properties": {"order_id": {"type": "string"}}}' }];
  return formToBody(form);
}

/** The first intent acting through an HTTP tool `crm` (added to the bot), with `extra` on the intent. */
function withAction(b: BotCreate, extra: Partial<NonNullable<BotCreate['policy']>['intents'][number]>): void {
  b.tools!.push({ name: 'crm', description: '', type: 'http', url: 'https://crm.example.com/hook' });
  Object.assign(b.policy!.intents[0]!, { action: { tool: 'crm' }, ...extra });
}

/** Field paths the backend's own bot builder rejects (422 details), or [] when it accepts. */
function backendProblems(body: unknown): string[] {
  try {
    newBotDoc(body as BotCreate, now, null);
    return [];
  } catch (err) {
    if (!(err instanceof BackendError)) throw err;
    // The backend also reports a nullable union's parent (`policy`) beside the precise field: keep the leaves.
    const fields = [...new Set((err.details as Array<{ field: string }>).map((d) => d.field))];
    return fields.filter((f) => !fields.some((g) => g.startsWith(`${f}.`))).sort();
  }
}

describe('validateBot', () => {
  it('turns the form into the API body', () => {
    const body = validBot();
    expect(body).toMatchObject({
      name: 'Reminder',
      voice: BOT_DEFAULTS.voice,
      llm: BOT_DEFAULTS.llm,
      max_call_seconds: 300,
      turn_detection: { mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 },
      interruption: { ignore_backchannels: true, min_words: 2 },
      dtmf: { inter_digit_timeout_ms: 1500 },
      policy: { intents: [{ name: 'yes', examples: ['yes', 'sure'], reply: 'Great, {{customer_name}}.', end_call: true }], fallback: { reply: 'Sorry?' } },
      tools: [{ name: 'lookup_order', description: 'Find an order', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } }],
    });
    expect(validateBot(body)).toEqual({});
    expect(backendProblems(body)).toEqual([]);
  });

  const cases: Array<[string, (b: BotCreate) => void, Record<string, string>]> = [
    ['an empty name', (b) => (b.name = ''), { name: 'This field is required.' }],
    ['a keypad pause under 300 ms', (b) => (b.dtmf = { inter_digit_timeout_ms: 100 }), { 'dtmf.inter_digit_timeout_ms': 'Must be at least 300.' }],
    ['a bad variable name', (b) => (b.variables![0]!.name = '1st'), {
      'variables.0.name': 'Must start with a letter or _, then letters, digits or _ (at most 64 characters).',
    }],
    ['a variable declared twice', (b) => b.variables!.push({ name: 'customer_name', required: false, description: '' }), { 'variables.1.name': 'customer_name is declared twice.' }],
    ['an undeclared placeholder', (b) => (b.prompt = 'Ask {{amount}}'), { prompt: '{{amount}} is not a declared variable.' }],
    ['a speed out of range', (b) => (b.voice!.speed = 9), { 'voice.speed': 'Must be at most 4.' }],
    ['a speed that is not a number', (b) => (b.voice!.speed = 'fast' as unknown as number), { 'voice.speed': 'Must be a number.' }],
    ['a fractional call limit', (b) => (b.max_call_seconds = 30.5), { max_call_seconds: 'Must be a whole number.' }],
    ['an empty model', (b) => (b.llm!.model = ''), { 'llm.model': 'This field is required.' }],
    ['an intent without examples', (b) => (b.policy!.intents[0]!.examples = []), { 'policy.intents.0.examples': 'Add at least one, or the keys that select this intent.' }],
    ['an intent with keys that are no keys', (b) => (b.policy!.intents[0]!.dtmf = '12a'), { 'policy.intents.0.dtmf': 'Keys 0–9, * and # only (1 to 32 of them), e.g. 1 or 42.' }],
    ['an intent with more than 32 keys', (b) => (b.policy!.intents[0]!.dtmf = '1'.repeat(33)), { 'policy.intents.0.dtmf': 'Keys 0–9, * and # only (1 to 32 of them), e.g. 1 or 42.' }],
    ['an action calling no tool of the bot', (b) => (b.policy!.intents[0]!.action = { tool: 'record_promise' }), {
      'policy.intents.0.action.tool': 'No tool of this bot is named record_promise. Pick one of its tools, or no action.',
    }],
    ['an action calling a tool without a type', (b) => (b.policy!.intents[0]!.action = { tool: 'lookup_order' }), {
      'policy.intents.0.action.tool': 'lookup_order has no type, so it cannot run: give it one, or pick another tool.',
    }],
    ['an action calling a tool that hangs up', (b) => {
      b.tools!.push({ name: 'bye', description: '', type: 'end_call' });
      b.policy!.intents[0]!.action = { tool: 'bye' };
    }, { 'policy.intents.0.action.tool': 'bye ends the call: tick “End the call after this reply” instead, or pick another tool.' }],
    ['an error reply without an action', (b) => (b.policy!.intents[0]!.on_error_reply = 'Sorry.'), { 'policy.intents.0.on_error_reply': 'Said when the action fails: pick an action, or leave this empty.' }],
    ['an empty error reply', (b) => withAction(b, { on_error_reply: '' }), { 'policy.intents.0.on_error_reply': 'This field is required.' }],
    ['an argument value too long', (b) => withAction(b, { action: { tool: 'crm', arguments: { amount: 'x'.repeat(1001) } } }), { 'policy.intents.0.action.arguments.amount': 'Must be at most 1000 characters.' }],
    ['more than 20 arguments', (b) => withAction(b, { action: { tool: 'crm', arguments: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`a${i}`, ''])) } }), {
      'policy.intents.0.action.arguments': 'At most 20 entries allowed.',
    }],
    ['an argument with an undeclared placeholder', (b) => withAction(b, { action: { tool: 'crm', arguments: { amount: '{{amount_due}}' } } }), {
      'policy.intents.0.action.arguments.amount': '{{amount_due}} is not a declared variable.',
    }],
    ['a tool result in a reply without an action', (b) => (b.policy!.intents[0]!.reply = 'Ref {{result.ref}}.'), { 'policy.intents.0.reply': '{{result.ref}} is only for the reply of an intent with an action.' }],
    ['an empty fallback', (b) => (b.policy!.fallback.reply = ''), { 'policy.fallback.reply': 'This field is required.' }],
    ['a temperature below 0', (b) => (b.llm!.temperature = -1), { 'llm.temperature': 'Must be at least 0.' }],
    ['a tool name with a space', (b) => (b.tools![0]!.name = 'look up'), { 'tools.0.name': 'Letters, digits, _ and - only (1 to 64 characters).' }],
    ['an empty tool name', (b) => b.tools!.push(toolToBody({ ...emptyTool(''), name: ' ', description: '', parameters: '' })), { 'tools.1.name': 'Letters, digits, _ and - only (1 to 64 characters).' }],
    ['a tool description too long', (b) => (b.tools![0]!.description = 'x'.repeat(1001)), { 'tools.0.description': 'Must be at most 1000 characters.' }],
    ['tool parameters that are not JSON', (b) => (b.tools![0] = toolToBody({ ...emptyTool(''), name: 'x', description: '', parameters: '{"type": "object"' })), {
      'tools.0.parameters': 'Must be a JSON object, e.g. {"type": "object"}.',
    }],
    ['tool parameters that are a list', (b) => (b.tools![0] = toolToBody({ ...emptyTool(''), name: 'x', description: '', parameters: '[1, 2]' })), {
      'tools.0.parameters': 'Must be a JSON object, e.g. {"type": "object"}.',
    }],
    ['leaving a message without one', (b) => (b.answering_machine = { detect: true, on_machine: 'leave_message', message: '  ' }), {
      'answering_machine.message': 'Said to the machine after its beep: required when the bot leaves a message.',
    }],
    ['a message for machines with an undeclared placeholder', (b) => (b.answering_machine = { on_machine: 'leave_message', message: 'Call {{agent_name}} back.' }), {
      'answering_machine.message': '{{agent_name}} is not a declared variable.',
    }],
    ['a built-in placeholder in the message for machines', (b) => (b.answering_machine = { on_machine: 'hangup', message: 'You pressed {{digits}}.' }), {
      'answering_machine.message': '{{digits}} is not a declared variable.',
    }],
    ['a wait for the beep under 5 s', (b) => (b.answering_machine = { max_wait_for_beep_seconds: 4 }), { 'answering_machine.max_wait_for_beep_seconds': 'Must be at least 5.' }],
    ['a wait for the beep over 120 s', (b) => (b.answering_machine = { detect: true, max_wait_for_beep_seconds: 121 }), { 'answering_machine.max_wait_for_beep_seconds': 'Must be at most 120.' }],
    // Turn-taking (docs/design.md §11).
    ['a turn detection mode that is none', (b) => (b.turn_detection = { mode: 'eager' as 'smart' }), { 'turn_detection.mode': 'Must be equal to constant.' }],
    ['a maximum silence over 5 s', (b) => (b.turn_detection = { mode: 'smart', end_of_turn_silence_ms: 5001, min_silence_ms: 250 }), { 'turn_detection.end_of_turn_silence_ms': 'Must be at most 5000.' }],
    ['a minimum silence under 100 ms', (b) => (b.turn_detection = { min_silence_ms: 50 }), { 'turn_detection.min_silence_ms': 'Must be at least 100.' }],
    ['a minimum silence over the maximum', (b) => (b.turn_detection = { mode: 'smart', end_of_turn_silence_ms: 600, min_silence_ms: 601 }), {
      'turn_detection.min_silence_ms': 'Must be at most the maximum silence (600 ms).',
    }],
    ['a minimum silence over the default maximum', (b) => (b.turn_detection = { min_silence_ms: 701 }), { 'turn_detection.min_silence_ms': 'Must be at most the maximum silence (700 ms).' }],
    ['a minimum silence over the maximum in fixed mode', (b) => (b.turn_detection = { mode: 'fixed', end_of_turn_silence_ms: 200, min_silence_ms: 250 }), {
      'turn_detection.min_silence_ms': 'Must be at most the end-of-turn silence (200 ms).',
    }],
    ['no words interrupting', (b) => (b.interruption = { min_words: 0 }), { 'interruption.min_words': 'Must be at least 1.' }],
    ['more than 10 words interrupting', (b) => (b.interruption = { ignore_backchannels: true, min_words: 11 }), { 'interruption.min_words': 'Must be at most 10.' }],
    ['backchannels ignored as text', (b) => (b.interruption = { ignore_backchannels: 'yes' as unknown as boolean }), { 'interruption.ignore_backchannels': 'Must be a boolean.' }],
    ['noise suppression as text', (b) => (b.audio = { noise_suppression: 'on' as unknown as boolean }), { 'audio.noise_suppression': 'Must be a boolean.' }],
    ['more than 50 tools', (b) => (b.tools = Array.from({ length: 51 }, (_, i) => ({ name: `t${i}`, description: '' }))), { tools: 'At most 50 allowed.' }],
    // Post-call analysis (docs/design.md §10).
    ['an analysis field name with capitals', (b) => (b.analysis = { fields: [{ name: 'Outcome', type: 'string' }] }), {
      'analysis.fields.0.name': 'Lowercase letters, digits and _, starting with a letter (at most 64 characters), e.g. outcome.',
    }],
    ['an analysis field named twice', (b) => (b.analysis = { fields: [{ name: 'outcome', type: 'string' }, { name: 'outcome', type: 'number' }] }), {
      'analysis.fields.1.name': 'Another analysis field has this name already.',
    }],
    ['an enum field without values', (b) => (b.analysis = { fields: [{ name: 'outcome', type: 'enum' }] }), { 'analysis.fields.0.values': 'List the values it may take, one per line.' }],
    ['an enum value listed twice', (b) => (b.analysis = { fields: [{ name: 'outcome', type: 'enum', values: ['paid', 'refused', 'paid'] }] }), { 'analysis.fields.0.values.2': '“paid” is listed twice.' }],
    ['more than 20 analysis fields', (b) => (b.analysis = { fields: Array.from({ length: 21 }, (_, i) => ({ name: `f${i}`, type: 'string' as const })) }), { 'analysis.fields': 'At most 20 allowed.' }],
    ['an intent setting no analysis field', (b) => (b.policy!.intents[0]!.sets = { outcome: 'paid' }), {
      'policy.intents.0.sets.outcome': 'No analysis field is named outcome: add it under Post-call analysis, or pick another.',
    }],
    ['an intent setting a number field to text', (b) => {
      b.analysis = { fields: [{ name: 'amount', type: 'number' }] };
      b.policy!.intents[0]!.sets = { amount: 'forty' };
    }, { 'policy.intents.0.sets.amount': 'Must be a number.' }],
    ['an intent setting a yes/no field to text', (b) => {
      b.analysis = { fields: [{ name: 'callback', type: 'boolean' }] };
      b.policy!.intents[0]!.sets = { callback: 'yes' };
    }, { 'policy.intents.0.sets.callback': 'Must be yes or no.' }],
    ['an intent setting an enum field to another value', (b) => {
      b.analysis = { fields: [{ name: 'outcome', type: 'enum', values: ['paid', 'refused'] }] };
      b.policy!.intents[0]!.sets = { outcome: 'maybe' };
    }, { 'policy.intents.0.sets.outcome': 'Must be one of the field’s values: paid, refused.' }],
  ];
  it('accepts an intent selected by keys alone, acting through an HTTP tool, as the backend does', () => {
    const body = validBot();
    body.policy!.intents[0]!.examples = [];
    body.policy!.intents[0]!.dtmf = '#';
    withAction(body, { action: { tool: 'crm', arguments: { keys: '{{digits}}', who: '{{customer_name}}' } }, reply: 'Saved as {{result.ref}}.', on_error_reply: 'Sorry {{customer_name}}.' });
    expect(validateBot(body)).toEqual({});
    expect(backendProblems(body)).toEqual([]);
  });

  it('accepts a message for machines with declared variables, and any subset of the settings, as the backend does', () => {
    for (const am of [
      { detect: true, on_machine: 'leave_message' as const, message: 'Hello {{customer_name}}, please call us back.', max_wait_for_beep_seconds: 120 },
      { detect: true },
      { on_machine: 'hangup' as const, message: '' },
      { on_machine: 'leave_message' as const, message: 'Call us.' },
      {},
    ]) {
      const body = { ...validBot(), answering_machine: am };
      expect(validateBot(body)).toEqual({});
      expect(backendProblems(body)).toEqual([]);
    }
  });

  it('accepts any subset of the turn-taking settings with the minimum at most the maximum, as the backend does', () => {
    for (const [td, it] of [
      [{ mode: 'fixed' as const, end_of_turn_silence_ms: 100, min_silence_ms: 100 }, { ignore_backchannels: false, min_words: 1 }],
      [{ mode: 'smart' as const, end_of_turn_silence_ms: 5000, min_silence_ms: 5000 }, { ignore_backchannels: true, min_words: 10 }],
      [{ mode: 'fixed' as const }, { ignore_backchannels: false }],
      [{ end_of_turn_silence_ms: 250 }, { min_words: 3 }],
      [{ min_silence_ms: 700 }, {}],
      // A maximum below the default minimum, no minimum given: the backend lowers the minimum with it.
      [{ end_of_turn_silence_ms: 200 }, {}],
      [{ mode: 'fixed' as const, end_of_turn_silence_ms: 150 }, {}],
      [{}, {}],
    ]) {
      const body = { ...validBot(), turn_detection: td, interruption: it };
      expect(validateBot(body)).toEqual({});
      expect(backendProblems(body)).toEqual([]);
    }
  });

  it('accepts analysis settings and intents setting their fields, as the backend does', () => {
    const body = validBot();
    body.analysis = {
      summary: true,
      fields: [
        { name: 'outcome', type: 'enum', values: ['paid', 'refused'], description: 'what the caller agreed to' },
        { name: 'amount', type: 'number' },
        { name: 'callback', type: 'boolean' },
        { name: 'note', type: 'string' },
      ],
      success: 'The yes intent matched.',
    };
    body.policy!.intents[0]!.sets = { outcome: 'paid', amount: 40, callback: false, note: 'said yes' };
    expect(validateBot(body)).toEqual({});
    expect(backendProblems(body)).toEqual([]);
  });

  it('accepts intents acting through a transfer or keypad tool, as the backend does', () => {
    const body = validBot();
    body.tools!.push(
      { name: 'to_desk', description: '', type: 'transfer_call', destinations: [{ name: 'desk', number: '+15005553000' }], mode: 'cold' },
      { name: 'press', description: '', type: 'send_dtmf' },
    );
    body.policy!.intents = [
      { name: 'agent', examples: ['a person please'], reply: 'Connecting.', action: { tool: 'to_desk', arguments: { destination: 'desk' } }, on_error_reply: 'Nobody is free.' },
      { name: 'menu', examples: [], dtmf: '0', reply: 'Done.', action: { tool: 'press', arguments: { digits: '{{digits}}#' } } },
    ];
    expect(validateBot(body)).toEqual({});
    expect(backendProblems(body)).toEqual([]);
  });

  it.each(cases)('reports %s on the same fields as the backend', (_, mutate, expected) => {
    const body = validBot();
    mutate(body);
    const errors = validateBot(body);
    expect(errors).toEqual(expected);
    expect(Object.keys(errors).sort()).toEqual(backendProblems(body));
  });

  it('finds a nested error for a control that edits a list (examples → examples.0)', () => {
    expect(errorFor({ 'policy.intents.0.examples.2': 'Must be at most 500 characters.' }, 'policy.intents.0.examples')).toBe('Must be at most 500 characters.');
    expect(errorFor({ 'voice.speed': 'x' }, 'voice')).toBe('x');
    expect(errorFor({ 'voice.speed': 'x' }, 'voice.speed_x')).toBeUndefined();
  });
});

describe('API error bodies', () => {
  it('maps 422 details to fields as readable sentences', () => {
    expect(detailFieldErrors([{ field: 'name', message: 'must NOT have fewer than 1 characters' }, { field: 'expires_at', message: 'must be in the future' }, { nonsense: 1 }])).toEqual({
      name: 'Must NOT have fewer than 1 characters.',
      expires_at: 'Must be in the future.',
    });
    expect(detailFieldErrors(undefined)).toEqual({});
  });

  it('writes the error body as one readable message', () => {
    expect(readableMessage('invalid_credentials', 'email or password is wrong', undefined)).toBe('Email or password is wrong.');
    expect(readableMessage('validation_failed', 'the request is invalid', [{ field: 'expires_at', message: 'must be in the future' }])).toBe(
      'The request is invalid: expires_at must be in the future.',
    );
    expect(readableMessage('variables_mismatch', "the variables do not match the bot's declared variables", { missing: ['a'], unknown: ['b', 'c'] })).toBe(
      "The variables do not match the bot's declared variables (missing a; unknown b, c).",
    );
    expect(readableMessage('http_502', '', undefined)).toBe('Http 502.');
  });

  it('phrases schema keywords for people', () => {
    expect(friendlyMessage({ keyword: 'minLength', params: { limit: 3 }, message: '' })).toBe('Must be at least 3 characters.');
    expect(friendlyMessage({ keyword: 'maxItems', params: { limit: 50 }, message: '' })).toBe('At most 50 allowed.');
    expect(friendlyMessage({ keyword: 'const', params: {}, message: 'must be equal to constant' })).toBe('Must be equal to constant.');
  });
});
