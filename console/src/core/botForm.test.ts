// The tools and policy parts of the bot form: stored tools and intents ↔ form text ↔ API body, write-only
// headers, and the rules checked before sending.
import { BOT_DEFAULTS, type Bot } from '@voice-platform/schemas/bot.js';
import {
  actionTools,
  analysisToBody,
  analysisToForm,
  answeringMachineToBody,
  answeringMachineToForm,
  botToForm,
  emptyArgument,
  emptyHeader,
  emptyIntent,
  emptyTool,
  formToBody,
  headersChanged,
  intentToBody,
  intentToForm,
  interruptionToForm,
  parseParameters,
  policyProblems,
  privacyToBody,
  privacyToForm,
  setsProblems,
  setValue,
  toolProblems,
  toolToBody,
  toolToForm,
  turnDetectionToForm,
  validArgumentName,
  type IntentForm,
  type ToolForm,
} from './botForm.js';
import { validateBot } from './validation.js';

const params = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

function storedBot(tools: Bot['tools']): Bot {
  return { ...BOT_DEFAULTS, id: 'b1', name: 'Shop', tools, has_tool_secret: false, version: 1, published_version: 1, created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z' };
}

describe('bot tools in the form', () => {
  it('a new bot has no tools, and sends an empty list', () => {
    const form = botToForm();
    expect(form.tools).toEqual([]);
    expect(formToBody(form).tools).toEqual([]);
  });

  it('shows stored parameters as pretty JSON and an absent description or parameters as empty text', () => {
    expect(toolToForm({ name: 'lookup_order', description: 'Find an order', parameters: params })).toMatchObject({
      name: 'lookup_order',
      description: 'Find an order',
      type: '',
      parameters: JSON.stringify(params, null, 2),
    });
    expect(toolToForm({ name: 'hang_up' } as Bot['tools'][number])).toMatchObject({ name: 'hang_up', description: '', parameters: '' });
  });

  it('round-trips stored tools unchanged', () => {
    const tools = [
      { name: 'lookup_order', description: 'Find an order', parameters: params },
      { name: 'transfer-to-agent', description: '' },
    ];
    expect(formToBody(botToForm(storedBot(tools))).tools).toEqual(tools);
  });

  it('trims the name, keeps the description as typed, and leaves out blank parameters', () => {
    expect(toolToBody({ ...emptyTool(''), name: '  lookup_order ', description: ' Find it ', parameters: '  \n ' })).toEqual({ name: 'lookup_order', description: ' Find it ' });
    expect(toolToBody({ ...emptyTool(''), name: 'x', parameters: '{}' })).toEqual({ name: 'x', description: '', parameters: {} });
  });

  it('keeps parameters that are not JSON as text, so the schema names the field', () => {
    expect(parseParameters('{"type": "object"')).toBe('{"type": "object"');
    expect(parseParameters(' [1, 2] ')).toEqual([1, 2]);
    expect(parseParameters('')).toBeUndefined();
  });
});

const httpTool = { name: 'record_promise', description: 'Record a promise to pay', type: 'http' as const, url: 'https://crm.example.com/promises', method: 'POST' as const, timeout_ms: 3000, say_while_waiting: 'One moment.', parameters: params };
const transferTool = {
  name: 'to_agent',
  description: '',
  type: 'transfer_call' as const,
  destinations: [
    { name: 'billing', number: '+4915112345678', description: 'money questions' },
    { name: 'pbx', sip_uri: 'sip:agent@pbx.example.com' },
  ],
  mode: 'warm' as const,
  announcement: 'Let me connect you.',
  whisper: 'A caller about {{summary}}.',
  on_failure: 'Nobody is free right now.',
};

describe('tool types in the form', () => {
  it('round-trips a tool of each type as stored (header names aside)', () => {
    const tools = [httpTool, transferTool, { name: 'hang_up', description: 'End the call', type: 'end_call' as const }, { name: 'press', description: '', type: 'send_dtmf' as const }];
    expect(formToBody(botToForm(storedBot(tools))).tools).toEqual(tools);
  });

  it('a new tool calls a URL with POST and sends only what was filled in', () => {
    const t: ToolForm = { ...emptyTool(), name: 'lookup', url: ' https://api.example.com/x ' };
    expect(toolToBody(t)).toEqual({ name: 'lookup', description: '', type: 'http', url: 'https://api.example.com/x', method: 'POST' });
    expect(toolToBody({ ...t, timeout_ms: '2000', method: 'GET', say_while_waiting: '  ' })).toEqual({ name: 'lookup', description: '', type: 'http', url: 'https://api.example.com/x', method: 'GET', timeout_ms: 2000 });
    // A timeout that is not a number stays text: the schema names the field.
    expect(validateBot({ name: 'b', tools: [toolToBody({ ...t, timeout_ms: 'soon' })] })).toEqual({ 'tools.0.timeout_ms': 'Must be a whole number.' });
    expect(validateBot({ name: 'b', tools: [toolToBody({ ...t, timeout_ms: '100' })] })).toEqual({ 'tools.0.timeout_ms': 'Must be at least 500.' });
  });

  it('sends only the chosen type’s fields, whatever else was typed', () => {
    const t: ToolForm = { ...toolToForm(transferTool), url: 'https://typed.example.com', headers: [{ name: 'X-A', value: 'v', stored: false }] };
    expect(toolToBody({ ...t, type: 'end_call' })).toEqual({ name: 'to_agent', description: '', type: 'end_call' });
    expect(Object.keys(toolToBody({ ...t, type: 'http' })).sort()).toEqual(['description', 'headers', 'method', 'name', 'type', 'url']);
    expect(Object.keys(toolToBody(t)).sort()).toEqual(['announcement', 'description', 'destinations', 'mode', 'name', 'on_failure', 'type', 'whisper']);
  });

  it('tells a number from a SIP URI and says the whisper in warm mode only', () => {
    const t = toolToForm(transferTool);
    expect(t.destinations.map((d) => d.target)).toEqual(['+4915112345678', 'sip:agent@pbx.example.com']);
    t.destinations[0]!.target = ' SIPS:desk@pbx.example.com ';
    t.mode = 'cold';
    const body = toolToBody(t);
    expect(body.destinations![0]).toEqual({ name: 'billing', sip_uri: 'SIPS:desk@pbx.example.com', description: 'money questions' });
    expect(body).not.toHaveProperty('whisper');
    expect(body.mode).toBe('cold');
  });
});

describe('write-only tool headers', () => {
  const stored = { ...httpTool, header_names: ['Authorization', 'X-Tenant'] };

  it('shows the stored names with empty values, and sends no headers while they are untouched (the values are kept)', () => {
    const t = toolToForm(stored);
    expect(t.headers).toEqual([
      { name: 'Authorization', value: '', stored: true },
      { name: 'X-Tenant', value: '', stored: true },
    ]);
    expect(headersChanged(t)).toBe(false);
    expect(toolToBody(t)).not.toHaveProperty('headers');
    expect(toolToBody(t)).not.toHaveProperty('header_names');
    t.description = 'edited';
    expect(toolToBody(t)).not.toHaveProperty('headers');
    expect(toolProblems([t])).toEqual({});
  });

  it('sends every header once one changes, asking again for the values it cannot keep', () => {
    const t = toolToForm(stored);
    t.headers[0]!.value = 'Bearer new';
    expect(toolToBody(t).headers).toEqual({ Authorization: 'Bearer new', 'X-Tenant': '' });
    expect(toolProblems([t])).toEqual({ 'tools.0.headers.1.value': expect.stringMatching(/^Enter the value again/) });
    t.headers[1]!.value = 'acme';
    expect(toolProblems([t])).toEqual({});
    expect(toolToBody(t).headers).toEqual({ Authorization: 'Bearer new', 'X-Tenant': 'acme' });
  });

  it('removing every row sends {} (the stored values are deleted); adding one sends it', () => {
    const t = toolToForm(stored);
    t.headers = [];
    expect(toolToBody(t).headers).toEqual({});
    const fresh: ToolForm = { ...emptyTool(), name: 'x', url: 'https://a.example.com', headers: [{ ...emptyHeader(), name: ' X-Key ', value: 's3cret' }] };
    expect(toolToBody(fresh).headers).toEqual({ 'X-Key': 's3cret' });
    expect(toolToBody({ ...fresh, headers: [] })).not.toHaveProperty('headers'); // nothing stored, nothing to delete
  });

  it('a renamed tool keeps nothing (values are kept by tool name): its values are asked for again', () => {
    const t = toolToForm(stored);
    t.name = 'record_promise_v2';
    expect(headersChanged(t)).toBe(true);
    expect(Object.keys(toolProblems([t]))).toEqual(['tools.0.headers.0.value', 'tools.0.headers.1.value']);
  });

  it('checks header names, duplicates and an http tool’s URL before sending', () => {
    const t: ToolForm = {
      ...emptyTool(),
      name: 'a',
      headers: [
        { name: '', value: 'x', stored: false },
        { name: 'Bad Name', value: 'x', stored: false },
        { name: 'x-key', value: 'x', stored: false },
        { name: 'X-Key', value: 'y', stored: false },
      ],
    };
    expect(toolProblems([t, { ...emptyTool('end_call'), name: 'a' }])).toEqual({
      'tools.0.url': 'This field is required.',
      'tools.0.headers.0.name': 'This field is required.',
      'tools.0.headers.1.name': expect.stringMatching(/^Letters, digits/),
      'tools.0.headers.3.name': 'Another header has this name already.',
      'tools.1.name': 'Another tool has this name already.',
    });
    const transfer = { ...toolToForm(transferTool) };
    transfer.destinations[1]!.target = ' ';
    expect(toolProblems([transfer])).toEqual({ 'tools.0.destinations.1.number': expect.stringMatching(/^Enter a number/) });
  });

  it('a warm transfer dials numbers only (through the call’s trunk); a cold one takes a SIP URI too', () => {
    const warm = toolToForm(transferTool);
    expect(warm.mode).toBe('warm');
    expect(toolProblems([warm])).toEqual({
      'tools.0.destinations.1.sip_uri': 'A warm transfer dials a number through the call’s trunk: enter a number (E.164), or pick cold mode for a SIP URI.',
    });
    expect(toolProblems([{ ...warm, mode: 'cold' }])).toEqual({});
  });

  it('a destination number goes through the backend’s libphonenumber check: international formats and the test phone’s agents pass, impossible or national ones are named', () => {
    const t = toolToForm(transferTool);
    t.mode = 'cold';
    const targets = ['+1 (415) 555-0100', '+15005553000', '+1 500 555 3486', '12345', '+1 555 0100 000 000', '(415) 555-0100', 'sip:desk@pbx.example.com'];
    t.destinations = targets.map((target, j) => ({ name: `d${j}`, target, description: '' }));
    expect(toolProblems([t])).toEqual({
      'tools.0.destinations.3.number': 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
      'tools.0.destinations.4.number': 'Too long for a phone number.',
      'tools.0.destinations.5.number': 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
    });
    // Sent as typed (the backend answers E.164); the schema no longer refuses the formatted one.
    const body = toolToBody({ ...t, destinations: t.destinations.slice(0, 3) });
    expect(body.destinations!.map((d) => d.number)).toEqual(['+1 (415) 555-0100', '+15005553000', '+1 500 555 3486']);
    expect(validateBot({ name: 'b', tools: [body] })).toEqual({});
  });
});

describe('the rest of the bot survives the form', () => {
  it('keeps an intent’s action, keys and error reply, and the LLM base URL', () => {
    const bot = storedBot([httpTool]);
    bot.llm = { provider: 'openai', model: 'local', temperature: 0.2, base_url: 'http://vllm.internal:8000/v1' };
    bot.policy = {
      intents: [{ name: 'promise', examples: ['I will pay'], reply: 'Noted: {{result.ref}}.', action: { tool: 'record_promise', arguments: { amount: '{{digits}}' } }, on_error_reply: 'Sorry.', dtmf: '1' }],
      fallback: { reply: 'Pardon?' },
    };
    const body = formToBody(botToForm(bot));
    expect(body.llm).toEqual(bot.llm);
    expect(body.policy).toEqual(bot.policy);
    const form = botToForm(bot);
    form.llm.base_url = ' ';
    expect(formToBody(form).llm).not.toHaveProperty('base_url');
  });
});


describe('policy intents in the form', () => {
  const acting = { name: 'promise', examples: ['I will pay'], reply: 'Noted: {{result.ref}}.', end_call: true, action: { tool: 'record_promise', arguments: { amount: '{{digits}}', who: '{{customer_name}}' } }, on_error_reply: 'Sorry, try later.', dtmf: '1' };
  const intent = (over: Partial<IntentForm>): IntentForm => ({ ...emptyIntent(), name: 'i', reply: 'Ok.', ...over });

  it('shows an intent’s action, its arguments in order, the error reply and the keys as form text', () => {
    expect(intentToForm(acting)).toEqual({
      name: 'promise',
      examples: 'I will pay',
      reply: 'Noted: {{result.ref}}.',
      end_call: true,
      dtmf: '1',
      tool: 'record_promise',
      arguments: [
        { name: 'amount', value: '{{digits}}' },
        { name: 'who', value: '{{customer_name}}' },
      ],
      on_error_reply: 'Sorry, try later.',
      sets: [],
    });
    expect(intentToForm({ name: 'plain', examples: ['hi'], reply: 'Hello.' })).toEqual({ ...emptyIntent(), name: 'plain', examples: 'hi', reply: 'Hello.' });
  });

  it('an intent saved and reopened keeps every field; a plain one gains none', () => {
    const keysOnly = { name: 'menu', examples: [], reply: 'You pressed {{digits}}.', dtmf: '*9#' };
    const noArgs = { name: 'ping', examples: ['ping'], reply: 'Pong.', action: { tool: 'record_promise' } };
    const plain = { name: 'plain', examples: ['hi', 'hello'], reply: 'Hello.' };
    for (const i of [acting, keysOnly, noArgs, plain]) expect(intentToBody(intentToForm(i))).toEqual(i);
    const bot = storedBot([httpTool]);
    bot.policy = { intents: [acting, keysOnly, noArgs, plain], fallback: { reply: 'Pardon?', end_call: true } };
    expect(formToBody(botToForm(bot)).policy).toEqual(bot.policy);
  });

  it('sends no empty field: blank keys and error reply are left out, an action without arguments has none', () => {
    const body = intentToBody(intent({ examples: ' hi \n\n', dtmf: '  ', tool: 'crm', arguments: [emptyArgument()], on_error_reply: ' ' }));
    expect(body).toEqual({ name: 'i', examples: ['hi'], reply: 'Ok.', action: { tool: 'crm' } });
    expect(intentToBody(intent({ dtmf: ' 12 ', tool: ' crm ', arguments: [{ name: ' n ', value: ' {{digits}} ' }], on_error_reply: ' Sorry. ' }))).toEqual({
      name: 'i',
      examples: [],
      reply: 'Ok.',
      dtmf: '12',
      // Argument values are templates, sent as typed.
      action: { tool: 'crm', arguments: { n: ' {{digits}} ' } },
      on_error_reply: 'Sorry.',
    });
  });

  it('with no action picked, the arguments and the error reply typed for one are not sent (the backend would refuse the reply)', () => {
    const f = intent({ examples: 'hi', tool: 'crm', arguments: [{ name: 'n', value: 'v' }], on_error_reply: 'Sorry.' });
    f.tool = '';
    expect(intentToBody(f)).toEqual({ name: 'i', examples: ['hi'], reply: 'Ok.' });
    expect(policyProblems({ usePolicy: true, intents: [{ ...f, arguments: [emptyArgument()] }] })).toEqual({});
  });

  it('offers the tools a script can run as actions (HTTP, transfer, keys; not hanging up), by their current names', () => {
    const tools: ToolForm[] = [
      toolToForm(httpTool),
      toolToForm(transferTool),
      { ...emptyTool('http'), name: ' lookup ' },
      { ...emptyTool('http'), name: '' },
      // A second tool of a name: the backend finds the first.
      { ...emptyTool('send_dtmf'), name: 'lookup' },
      { ...emptyTool('send_dtmf'), name: 'press' },
      { ...emptyTool('end_call'), name: 'bye' },
      { ...emptyTool(''), name: 'old' },
    ];
    expect(actionTools(tools)).toEqual([
      { name: 'record_promise', type: 'http' },
      { name: 'to_agent', type: 'transfer_call' },
      { name: 'lookup', type: 'http' },
      { name: 'press', type: 'send_dtmf' },
    ]);
  });

  it('checks the argument rows before sending: a name for each, valid and not twice', () => {
    const rows = [
      { name: 'amount', value: '{{digits}}' },
      { name: '', value: 'x' },
      { name: 'order-id', value: '' },
      { name: ' amount ', value: '2' },
      { name: 'ok_2', value: '' },
    ];
    expect(policyProblems({ usePolicy: true, intents: [intent({ examples: 'a' }), intent({ tool: 'crm', arguments: rows })] })).toEqual({
      'policy.intents.1.action.arguments.1.name': 'This field is required.',
      'policy.intents.1.action.arguments.2.name': 'Letters, digits and _ only (1 to 64 characters), e.g. order_id.',
      'policy.intents.1.action.arguments.3.name': 'Another argument has this name already.',
    });
    // Without the scripted policy nothing of it is sent, nor checked.
    expect(policyProblems({ usePolicy: false, intents: [intent({ tool: 'crm', arguments: rows })] })).toEqual({});
    expect(['a', 'A_1', ' x ', 'a'.repeat(64)].every(validArgumentName)).toBe(true);
    expect(['', 'a-b', 'a b', 'ä', 'a'.repeat(65)].some(validArgumentName)).toBe(false);
  });
});

describe('answering machines in the form', () => {
  const am = { detect: true, on_machine: 'leave_message' as const, message: 'Hello {{customer_name}}, please call us back.', max_wait_for_beep_seconds: 45 };

  it('a new bot does not detect machines and hangs up on them, and sends the defaults', () => {
    const form = botToForm();
    expect(form.answering_machine).toEqual({ detect: false, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: '30' });
    expect(formToBody(form).answering_machine).toEqual(BOT_DEFAULTS.answering_machine);
  });

  it('round-trips stored settings unchanged', () => {
    const bot = { ...storedBot([]), answering_machine: am };
    expect(botToForm(bot).answering_machine).toEqual({ ...am, max_wait_for_beep_seconds: '45' });
    expect(formToBody(botToForm(bot)).answering_machine).toEqual(am);
  });

  it('keeps and sends the message when the bot hangs up instead, so switching back loses nothing', () => {
    const form = botToForm({ ...storedBot([]), answering_machine: am });
    form.answering_machine.on_machine = 'hangup';
    expect(formToBody(form).answering_machine).toEqual({ ...am, on_machine: 'hangup' });
  });

  it('fills what a bot from an older backend lacks with the defaults', () => {
    const old = { ...storedBot([]) } as Partial<Bot>;
    delete old.answering_machine;
    expect(botToForm(old as Bot).answering_machine).toEqual(answeringMachineToForm(BOT_DEFAULTS.answering_machine));
    expect(answeringMachineToForm({ detect: true })).toEqual({ detect: true, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: '30' });
  });

  it('sends a wait that is no number as typed, so the schema names the field', () => {
    const body = answeringMachineToBody({ detect: true, on_machine: 'leave_message', message: 'Hi.', max_wait_for_beep_seconds: ' soon ' });
    expect(body.max_wait_for_beep_seconds).toBe('soon');
    expect(validateBot({ ...formToBody(botToForm()), name: 'x', answering_machine: body })).toEqual({ 'answering_machine.max_wait_for_beep_seconds': 'Must be a whole number.' });
  });
});

describe('turn-taking in the form', () => {
  const td = { mode: 'fixed' as const, end_of_turn_silence_ms: 1200, min_silence_ms: 400 };
  const it_ = { ignore_backchannels: false, min_words: 4 };

  it('a new bot detects turns smartly and ignores backchannels, and sends the defaults', () => {
    const form = botToForm();
    expect(form.turn_detection).toEqual({ mode: 'smart', end_of_turn_silence_ms: '700', min_silence_ms: '250' });
    expect(form.interruption).toEqual({ ignore_backchannels: true, min_words: '2' });
    const body = formToBody(form);
    expect(body.turn_detection).toEqual({ mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 });
    expect(body.interruption).toEqual({ ignore_backchannels: true, min_words: 2 });
    expect(body.turn_detection).toEqual(BOT_DEFAULTS.turn_detection);
    expect(body.interruption).toEqual(BOT_DEFAULTS.interruption);
  });

  it('round-trips stored settings unchanged, keeping the minimum silence in fixed mode', () => {
    const bot = { ...storedBot([]), turn_detection: td, interruption: it_ };
    expect(botToForm(bot).turn_detection).toEqual({ mode: 'fixed', end_of_turn_silence_ms: '1200', min_silence_ms: '400' });
    expect(botToForm(bot).interruption).toEqual({ ignore_backchannels: false, min_words: '4' });
    const body = formToBody(botToForm(bot));
    expect(body.turn_detection).toEqual(td);
    expect(body.interruption).toEqual(it_);
    // Back to smart: the minimum typed before is there again.
    const form = botToForm(bot);
    form.turn_detection.mode = 'smart';
    expect(formToBody(form).turn_detection).toEqual({ ...td, mode: 'smart' });
  });

  it('fills what a bot from an older backend lacks with the defaults', () => {
    const old = { ...storedBot([]), turn_detection: { end_of_turn_silence_ms: 900 } } as unknown as Partial<Bot>;
    delete old.interruption;
    const form = botToForm(old as Bot);
    expect(form.turn_detection).toEqual({ mode: 'smart', end_of_turn_silence_ms: '900', min_silence_ms: '250' });
    expect(form.interruption).toEqual({ ignore_backchannels: true, min_words: '2' });
    expect(turnDetectionToForm(undefined)).toEqual({ mode: 'smart', end_of_turn_silence_ms: '700', min_silence_ms: '250' });
    expect(interruptionToForm({ min_words: 3 })).toEqual({ ignore_backchannels: true, min_words: '3' });
  });

  it('sends numbers that are not numbers as typed, so the schema names the field', () => {
    const form = botToForm();
    form.name = 'x';
    form.turn_detection.min_silence_ms = ' quick ';
    form.interruption.min_words = '2.5';
    expect(validateBot(formToBody(form))).toEqual({ 'turn_detection.min_silence_ms': 'Must be a whole number.', 'interruption.min_words': 'Must be a whole number.' });
  });

  it('checks the minimum silence against the maximum before sending in smart mode, where both show', () => {
    const form = botToForm();
    form.name = 'x';
    form.turn_detection.min_silence_ms = '800';
    expect(validateBot(formToBody(form))).toEqual({ 'turn_detection.min_silence_ms': 'Must be at most the maximum silence (700 ms).' });
    form.turn_detection.end_of_turn_silence_ms = '800';
    expect(validateBot(formToBody(form))).toEqual({});
  });

  it('in fixed mode (the minimum hidden) an end-of-turn silence below the minimum lowers it with it, as the backend does', () => {
    const form = botToForm();
    form.name = 'x';
    form.turn_detection.mode = 'fixed';
    form.turn_detection.end_of_turn_silence_ms = '200';
    expect(formToBody(form).turn_detection).toEqual({ mode: 'fixed', end_of_turn_silence_ms: 200, min_silence_ms: 200 });
    expect(validateBot(formToBody(form))).toEqual({});
    // The form keeps what was typed: back to smart before saving, the minimum is as it was (and must fit).
    expect(form.turn_detection.min_silence_ms).toBe('250');
    form.turn_detection.mode = 'smart';
    expect(validateBot(formToBody(form))).toEqual({ 'turn_detection.min_silence_ms': 'Must be at most the maximum silence (200 ms).' });
    // An end-of-turn silence out of range is reported on its own field, the minimum left as typed.
    form.turn_detection.mode = 'fixed';
    form.turn_detection.end_of_turn_silence_ms = '50';
    expect(formToBody(form).turn_detection!.min_silence_ms).toBe(250);
    expect(validateBot(formToBody(form))).toEqual({ 'turn_detection.end_of_turn_silence_ms': 'Must be at least 100.' });
  });
});

describe('post-call analysis in the form', () => {
  const analysis = {
    summary: true,
    fields: [
      { name: 'outcome', type: 'enum' as const, description: 'what the caller agreed to', values: ['paid', 'refused'] },
      { name: 'amount', type: 'number' as const, description: '' },
      { name: 'callback', type: 'boolean' as const, description: '' },
    ],
    success: 'The pay intent matched.',
  };
  const stored = (): Bot => ({
    ...storedBot([]),
    analysis,
    policy: { intents: [{ name: 'pay', examples: ['i will pay'], reply: 'Thanks.', sets: { outcome: 'paid', amount: 40, callback: false } }], fallback: { reply: 'Sorry?' } },
  });

  it('a new bot asks for nothing, and sends so', () => {
    const form = botToForm();
    expect(form.analysis).toEqual({ summary: false, fields: [], success: '' });
    expect(formToBody(form).analysis).toEqual(BOT_DEFAULTS.analysis);
  });

  it('round-trips stored settings and the intents’ sets unchanged, values typed by their field', () => {
    const form = botToForm(stored());
    expect(form.analysis.fields[0]).toEqual({ name: 'outcome', type: 'enum', description: 'what the caller agreed to', values: 'paid\nrefused' });
    expect(form.intents[0]!.sets).toEqual([
      { field: 'outcome', value: 'paid' },
      { field: 'amount', value: '40' },
      { field: 'callback', value: 'false' },
    ]);
    const body = formToBody(form);
    expect(body.analysis).toEqual(analysis);
    expect(body.policy!.intents[0]!.sets).toEqual({ outcome: 'paid', amount: 40, callback: false });
    expect(validateBot(body)).toEqual({});
  });

  it('keeps an enum’s values while another type is picked, and sends them with the enum only; a blank criterion is none', () => {
    const form = botToForm(stored());
    form.analysis.fields[0]!.type = 'string';
    form.analysis.success = '   ';
    expect(analysisToBody(form.analysis).fields[0]).toEqual({ name: 'outcome', type: 'string', description: 'what the caller agreed to' });
    expect(analysisToBody(form.analysis).success).toBeNull();
    form.analysis.fields[0]!.type = 'enum';
    expect(analysisToBody(form.analysis).fields[0]!.values).toEqual(['paid', 'refused']);
    form.analysis.fields[0]!.values = '\n  \n';
    expect(analysisToBody(form.analysis).fields[0]!.values).toBeUndefined();
    expect(analysisToForm(undefined)).toEqual({ summary: false, fields: [], success: '' });
  });

  it('types a set value by its field: a number, yes/no, an enum value trimmed, text as typed; what does not fit goes as typed', () => {
    const fields = [...analysis.fields, { name: 'note', type: 'string' as const }];
    expect(setValue({ field: 'amount', value: ' 12.5 ' }, fields)).toBe(12.5);
    expect(setValue({ field: 'amount', value: 'lots' }, fields)).toBe('lots');
    expect(setValue({ field: 'callback', value: 'true' }, fields)).toBe(true);
    expect(setValue({ field: 'outcome', value: ' paid ' }, fields)).toBe('paid');
    expect(setValue({ field: 'note', value: ' as typed ' }, fields)).toBe(' as typed ');
    expect(setValue({ field: 'ghost', value: '1' }, fields)).toBe('1');
    // An intent without sets sends none.
    expect(intentToBody({ ...emptyIntent(), name: 'x', examples: 'x', reply: 'y' })).not.toHaveProperty('sets');
  });

  it('checks the sets rows before sending: a field picked for each, not twice', () => {
    const form = botToForm(stored());
    form.intents[0]!.sets.push({ field: '', value: 'x' }, { field: 'amount', value: '1' });
    expect(setsProblems(form)).toEqual({ 'policy.intents.0.sets.3.field': 'Pick an analysis field.', 'policy.intents.0.sets.4.field': 'This intent sets this field already.' });
    expect(setsProblems({ ...form, usePolicy: false })).toEqual({});
  });
});

describe('noise suppression in the form', () => {
  it('is off for a new bot and for one from an older backend; the box round-trips into audio.noise_suppression', () => {
    expect(botToForm().noise_suppression).toBe(false);
    expect(formToBody(botToForm()).audio).toEqual({ noise_suppression: false });
    const old = { ...storedBot([]) } as Partial<Bot>;
    delete old.audio;
    expect(botToForm(old as Bot).noise_suppression).toBe(false);
    const on = { ...storedBot([]), audio: { noise_suppression: true } };
    expect(botToForm(on).noise_suppression).toBe(true);
    expect(formToBody(botToForm(on)).audio).toEqual({ noise_suppression: true });
  });
});

describe('privacy in the form: redaction and recording', () => {
  it('a new bot redacts nothing and records, and sends so', () => {
    const form = botToForm();
    expect(form.privacy).toEqual({ entities: [], redact_llm: false, recording: true, redact_keypad_tones: false });
    const body = formToBody(form);
    expect(body.redaction).toEqual({ entities: [], mode: 'mask', redact_llm: false });
    expect(body.recording).toEqual({ enabled: true, redact_keypad_tones: false });
  });

  it('round-trips stored settings; entities are sent once each, in the platform\'s order', () => {
    const stored: Bot = { ...storedBot([]), redaction: { entities: ['phone', 'card_number'], mode: 'mask', redact_llm: true }, recording: { enabled: false, redact_keypad_tones: true } };
    const form = botToForm(stored);
    expect(form.privacy).toEqual({ entities: ['card_number', 'phone'], redact_llm: true, recording: false, redact_keypad_tones: true });
    form.privacy.entities.push('email', 'card_number');
    expect(privacyToBody(form.privacy)).toEqual({ redaction: { entities: ['card_number', 'email', 'phone'], mode: 'mask', redact_llm: true }, recording: { enabled: false, redact_keypad_tones: true } });
  });

  it('a bot read from an older backend (no settings) shows no redaction and recording on', () => {
    const { redaction: _r, recording: _c, ...old } = { ...storedBot([]) } as Bot;
    expect(botToForm(old as Bot).privacy).toEqual({ entities: [], redact_llm: false, recording: true, redact_keypad_tones: false });
    expect(privacyToForm({})).toEqual(botToForm(old as Bot).privacy);
  });
});
