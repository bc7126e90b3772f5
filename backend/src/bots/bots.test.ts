import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Bot, RuntimeConfig } from '@voice-platform/schemas';
import { useAdminHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS, migrateBots } from '../stores.js';
import { DEMO_BOT_ID, seedDemoBot } from '../demoBot.js';

let h: Harness;
let auth: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

const post = (body: object) => h.http.post('/api/v1/bots').set('Authorization', auth).send(body);

describe('bots', () => {
  it('creates a bot with the offline defaults and reads it back', async () => {
    const res = await post({ name: 'Minimal' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Minimal',
      active: true,
      language: 'en-US',
      prompt: '',
      greeting: '',
      variables: [],
      voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 },
      stt: { provider: 'pocketsphinx', model: 'en-us', language: 'en-US' },
      llm: { provider: 'scripted', model: 'policy', temperature: 0 },
      tools: [],
      mcp_servers: [],
      knowledge_base_ids: [],
      has_tool_secret: false,
      policy: null,
      turn_detection: { mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 },
      interruption: { ignore_backchannels: true, min_words: 2 },
      dtmf: { inter_digit_timeout_ms: 1500 },
      answering_machine: { detect: false, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: 30 },
      audio: { noise_suppression: false },
      analysis: { summary: false, fields: [], success: null },
      redaction: { entities: [], mode: 'mask', redact_llm: false },
      recording: { enabled: true, redact_keypad_tones: false },
      max_call_seconds: 300,
      require_passing_tests: false,
      version: 1,
      published_version: 1,
      flow: null,
      handoff: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const one = await h.http.get(`/api/v1/bots/${res.body.id}`).set('Authorization', auth).expect(200);
    expect(one.body).toEqual(res.body);
    const list = await h.http.get('/api/v1/bots').set('Authorization', auth).expect(200);
    expect(list.body.items).toContainEqual(res.body);
  });

  it('refuses placeholders that name no declared variable, naming each field', async () => {
    const res = await post({
      name: 'Bad',
      prompt: 'Hi {{customer_name}} {{ghost}}',
      greeting: '{{other}}',
      variables: [{ name: 'customer_name', required: true, description: '' }],
      policy: { intents: [{ name: 'a', examples: ['x'], reply: '{{nope}}' }], fallback: { reply: '{{also}}' } },
    }).expect(422);
    expect(res.body.error).toEqual({
      code: 'validation_failed',
      message: expect.any(String),
      details: [
        { field: 'prompt', message: '{{ghost}} is not a declared variable' },
        { field: 'greeting', message: '{{other}} is not a declared variable' },
        { field: 'policy.intents.0.reply', message: '{{nope}} is not a declared variable' },
        { field: 'policy.fallback.reply', message: '{{also}} is not a declared variable' },
      ],
    });
    const dup = await post({ name: 'Dup', variables: [{ name: 'a', required: false }, { name: 'a', required: true }] }).expect(422);
    expect(dup.body.error.details).toEqual([{ field: 'variables.1.name', message: 'a is declared twice' }]);
  });

  it('validates the schema: unknown fields, policy shape, limits', async () => {
    const res = await post({ name: '', colour: 'red', max_call_seconds: 1, policy: { intents: [{ name: 'x', examples: [], reply: 'y' }] } }).expect(422);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'colour', 'max_call_seconds']));
    expect(fields.some((f: string) => f.startsWith('policy'))).toBe(true);
  });

  it('a keypad-only intent (dtmf) may leave out examples: stored and served with none; an intent with neither is refused by field', async () => {
    const policy = { intents: [{ name: 'account', dtmf: '42', reply: 'Account {{digits}}.' }, { name: 'stop', examples: ['stop'], reply: 'Bye.' }], fallback: { reply: 'Sorry?' } };
    const created = await post({ name: 'Keys', policy }).expect(201);
    expect(created.body.policy.intents[0]).toEqual({ name: 'account', examples: [], dtmf: '42', reply: 'Account {{digits}}.' });
    const config = await h.http.get(`/api/v1/config?bot_id=${created.body.id}`).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
    expect(config.body.bot.policy.intents[0]).toMatchObject({ name: 'account', examples: [], dtmf: '42' });
    const patched = await h.http.patch(`/api/v1/bots/${created.body.id}`).set('Authorization', auth).send({ policy: { ...policy, intents: [{ name: 'menu', dtmf: '1', reply: 'One.' }] } }).expect(200);
    expect(patched.body.policy.intents).toEqual([{ name: 'menu', examples: [], dtmf: '1', reply: 'One.' }]);
    const neither = await post({ name: 'Neither', policy: { intents: [{ name: 'vague', reply: 'What?' }], fallback: { reply: 'Sorry?' } } }).expect(422);
    expect(neither.body.error).toEqual({ code: 'validation_failed', message: expect.any(String), details: [{ field: 'policy.intents.0.examples', message: 'needs at least one example, or dtmf' }] });
  });

  it('patches a bot, re-checking templates against the merged result', async () => {
    const created = await post({ name: 'P', prompt: 'Hello {{customer_name}}', variables: [{ name: 'customer_name', required: true }] }).expect(201);
    const id = created.body.id as string;
    const off = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ active: false, greeting: 'Hi {{customer_name}}' }).expect(200);
    expect(off.body).toMatchObject({ active: false, greeting: 'Hi {{customer_name}}', prompt: 'Hello {{customer_name}}' });
    const orphan = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ variables: [] }).expect(422);
    expect(orphan.body.error.details).toContainEqual({ field: 'prompt', message: '{{customer_name}} is not a declared variable' });
    expect((await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({}).expect(422)).body.error.code).toBe('validation_failed');
    expect((await h.http.patch('/api/v1/bots/nope').set('Authorization', auth).send({ active: true }).expect(404)).body.error.code).toBe('bot_not_found');
    expect((await h.http.get('/api/v1/bots/nope').set('Authorization', auth).expect(404)).body.error.code).toBe('bot_not_found');
  });

  it('takes the keypad\'s inter-digit timeout, within 300–10000 ms, and gives it to the worker', async () => {
    const created = await post({ name: 'Keys', dtmf: { inter_digit_timeout_ms: 3000 } }).expect(201);
    expect(created.body.dtmf).toEqual({ inter_digit_timeout_ms: 3000 });
    const config = await h.http.get('/api/v1/config').query({ bot_id: created.body.id }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
    expect(config.body.bot.dtmf).toEqual({ inter_digit_timeout_ms: 3000 });
    for (const bad of [{ inter_digit_timeout_ms: 100 }, { inter_digit_timeout_ms: 20_000 }, { inter_digit_timeout_ms: 1.5 }, { pause_ms: 900 }]) {
      const res = await h.http.patch(`/api/v1/bots/${created.body.id}`).set('Authorization', auth).send({ dtmf: bad }).expect(422);
      expect(res.body.error.details.map((d: { field: string }) => d.field)[0]).toMatch(/^dtmf/);
    }
    expect((await h.http.get(`/api/v1/bots/${created.body.id}`).set('Authorization', auth).expect(200)).body.dtmf).toEqual({ inter_digit_timeout_ms: 3000 });
  });

  it('noise suppression: off by default and for bots stored before it, on by PATCH, given to the worker; a non-boolean is a 422 naming it', async () => {
    const created = await post({ name: 'Quiet' }).expect(201);
    expect(created.body.audio).toEqual({ noise_suppression: false });
    const id = created.body.id as string;
    // A bot stored before the setting existed reads as off.
    await h.db.collection(COLLECTIONS.bots).updateOne({ _id: id as never }, { $unset: { audio: '' } });
    expect((await h.http.get(`/api/v1/bots/${id}`).set('Authorization', auth).expect(200)).body.audio).toEqual({ noise_suppression: false });
    const edited = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ audio: { noise_suppression: true } }).expect(200);
    expect(edited.body.audio).toEqual({ noise_suppression: true });
    const config = await h.http.get('/api/v1/config').query({ bot_id: id }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
    expect(config.body.bot.audio).toEqual({ noise_suppression: true });
    const before = await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never });
    for (const bad of ['yes', 1, null]) {
      const res = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ audio: { noise_suppression: bad } }).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('audio.noise_suppression');
    }
    expect((await post({ name: 'Loud', audio: { noise_suppression: 'on' } }).expect(422)).body.error.details.map((d: { field: string }) => d.field)).toContain('audio.noise_suppression');
    expect(await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never })).toEqual(before);
  });

  it('answering machine settings: defaults, a partial edit keeps the rest, leave_message needs its message', async () => {
    const created = await post({ name: 'Screens', variables: [{ name: 'customer_name', required: false }], answering_machine: { detect: true } }).expect(201);
    expect(created.body.answering_machine).toEqual({ detect: true, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: 30 });
    const id = created.body.id as string;
    const edited = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ answering_machine: { on_machine: 'leave_message', message: 'Hi {{customer_name}}, please call us back.' } }).expect(200);
    expect(edited.body.answering_machine).toEqual({ detect: true, on_machine: 'leave_message', message: 'Hi {{customer_name}}, please call us back.', max_wait_for_beep_seconds: 30 });
    const before = await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never });
    const noMessage = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ answering_machine: { message: '' } }).expect(422);
    expect(noMessage.body.error.details).toEqual([{ field: 'answering_machine.message', message: 'is said to the machine: required for on_machine "leave_message"' }]);
    const ghost = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ answering_machine: { message: 'Hi {{ghost}}' } }).expect(422);
    expect(ghost.body.error.details).toEqual([{ field: 'answering_machine.message', message: '{{ghost}} is not a declared variable' }]);
    const wait = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ answering_machine: { max_wait_for_beep_seconds: 1 } }).expect(422);
    expect(wait.body.error.details.map((d: { field: string }) => d.field)[0]).toMatch(/^answering_machine/);
    expect(await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never })).toEqual(before);
  });

  it('turn-taking settings: smart by default, a partial edit keeps the rest, min_silence_ms never above the maximum', async () => {
    const created = await post({ name: 'Turns', turn_detection: { end_of_turn_silence_ms: 900 }, interruption: { min_words: 3 } }).expect(201);
    expect(created.body.turn_detection).toEqual({ mode: 'smart', end_of_turn_silence_ms: 900, min_silence_ms: 250 });
    expect(created.body.interruption).toEqual({ ignore_backchannels: true, min_words: 3 });
    const id = created.body.id as string;
    const edited = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ turn_detection: { mode: 'fixed' }, interruption: { ignore_backchannels: false } }).expect(200);
    expect(edited.body.turn_detection).toEqual({ mode: 'fixed', end_of_turn_silence_ms: 900, min_silence_ms: 250 });
    expect(edited.body.interruption).toEqual({ ignore_backchannels: false, min_words: 3 });
    const before = await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never });
    const over = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ turn_detection: { min_silence_ms: 1000 } }).expect(422);
    expect(over.body.error.details).toEqual([{ field: 'turn_detection.min_silence_ms', message: 'must be at most end_of_turn_silence_ms (900)' }]);
    const mode = await h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send({ turn_detection: { mode: 'eager' } }).expect(422);
    expect(mode.body.error.details.map((d: { field: string }) => d.field)[0]).toMatch(/^turn_detection/);
    await post({ name: 'Turns 2', turn_detection: { min_silence_ms: 800 } }).expect(422);
    // A maximum below the minimum it keeps lowers the minimum with it; only one given above the maximum is refused.
    const short = await post({ name: 'Turns 3', turn_detection: { end_of_turn_silence_ms: 200 } }).expect(201);
    expect(short.body.turn_detection).toEqual({ mode: 'smart', end_of_turn_silence_ms: 200, min_silence_ms: 200 });
    const lowered = await h.http.patch(`/api/v1/bots/${short.body.id}`).set('Authorization', auth).send({ turn_detection: { end_of_turn_silence_ms: 150 } }).expect(200);
    expect(lowered.body.turn_detection).toEqual({ mode: 'smart', end_of_turn_silence_ms: 150, min_silence_ms: 150 });
    expect(await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never })).toEqual(before);
  });

  it('post-call analysis settings: defaults, a partial edit keeps the rest, intents set fields of their type; every 422 names the field and changes nothing', async () => {
    const fields = [
      { name: 'outcome', type: 'enum', values: ['paid', 'promised', 'refused'] },
      { name: 'amount', type: 'number', description: 'the amount promised' },
      { name: 'callback', type: 'boolean' },
    ];
    const intents = [{ name: 'promise', examples: ['I will pay'], reply: 'Thanks.', sets: { outcome: 'promised', amount: 40, callback: false } }];
    const created = await post({ name: 'Collector', analysis: { summary: true, fields }, policy: { intents, fallback: { reply: 'Sorry?' } } }).expect(201);
    const stored = [{ ...fields[0], description: '' }, fields[1], { ...fields[2], description: '' }];
    expect(created.body.analysis).toEqual({ summary: true, fields: stored, success: null });
    expect(created.body.policy.intents[0].sets).toEqual({ outcome: 'promised', amount: 40, callback: false });
    const id = created.body.id as string;
    const patch = (body: object) => h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send(body);
    const edited = await patch({ analysis: { success: 'the caller promised to pay' } }).expect(200);
    expect(edited.body.analysis).toEqual({ summary: true, fields: stored, success: 'the caller promised to pay' });
    expect((await patch({ analysis: { success: null } }).expect(200)).body.analysis.success).toBeNull();

    const before = await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never });
    const policyWith = (sets: object) => ({ policy: { intents: [{ ...intents[0], sets }], fallback: { reply: 'Sorry?' } } });
    const cases: Array<[object, Array<{ field: string; message?: string }>]> = [
      [{ analysis: { fields: [{ name: 'note', type: 'string' }, { name: 'note', type: 'number' }] } }, [{ field: 'analysis.fields.1.name', message: 'note names another field already' }]],
      [{ analysis: { fields: [...fields, { name: 'kind', type: 'enum' }] } }, [{ field: 'analysis.fields.3.values', message: 'is required for an enum field: the values it may take' }]],
      [{ analysis: { fields: [...fields, { name: 'kind', type: 'string', values: ['x'] }] } }, [{ field: 'analysis.fields.3.values', message: 'is for enum fields only (this one is a string)' }]],
      [{ analysis: { fields: [...fields, { name: 'kind', type: 'enum', values: ['a', 'b', 'a'] }] } }, [{ field: 'analysis.fields.3.values.2', message: '"a" is listed twice' }]],
      // Removing a field an intent still sets.
      [{ analysis: { fields: fields.slice(0, 2) } }, [{ field: 'policy.intents.0.sets.callback', message: "callback is not one of the bot's analysis fields" }]],
      [policyWith({ amount: 'forty' }), [{ field: 'policy.intents.0.sets.amount', message: "must be a number: the field's type" }]],
      [policyWith({ callback: 'yes' }), [{ field: 'policy.intents.0.sets.callback', message: "must be a boolean: the field's type" }]],
      [policyWith({ outcome: 'maybe' }), [{ field: 'policy.intents.0.sets.outcome', message: 'must be one of the enum field\'s values ("paid", "promised", "refused")' }]],
      [policyWith({ ghost: 'x' }), [{ field: 'policy.intents.0.sets.ghost', message: "ghost is not one of the bot's analysis fields" }]],
      // What the schema holds: names, types, sizes, a blank criterion.
      [{ analysis: { fields: [{ name: 'Bad-Name', type: 'string' }] } }, [{ field: 'analysis.fields.0.name' }]],
      [{ analysis: { fields: [{ name: 'x', type: 'date' }] } }, [{ field: 'analysis.fields.0.type' }]],
      [{ analysis: { fields: Array.from({ length: 21 }, (_, i) => ({ name: `f${i}`, type: 'string' })) } }, [{ field: 'analysis.fields' }]],
      [{ analysis: { success: '   ' } }, [{ field: 'analysis.success' }]],
      [{ analysis: { summary: 'yes' } }, [{ field: 'analysis.summary' }]],
      [policyWith({ amount: { value: 40 } }), [{ field: 'policy.intents.0.sets.amount' }]],
    ];
    for (const [body, details] of cases) {
      const res = await patch(body).expect(422);
      expect([body, res.body.error.code]).toEqual([body, 'validation_failed']);
      expect([body, res.body.error.details.map((d: { field: string; message: string }) => (details[0]!.message ? d : { field: d.field }))[0]]).toEqual([body, details[0]]);
    }
    // A new bot is checked alike, and not stored.
    const count = await h.db.collection(COLLECTIONS.bots).countDocuments();
    expect((await post({ name: 'Bad', analysis: { fields: [{ name: 'kind', type: 'enum' }] } }).expect(422)).body.error.details).toEqual([
      { field: 'analysis.fields.0.values', message: 'is required for an enum field: the values it may take' },
    ]);
    expect((await post({ name: 'Bad', policy: { intents: [{ ...intents[0], sets: { outcome: 'paid' } }], fallback: { reply: 'x' } } }).expect(422)).body.error.details).toEqual([
      { field: 'policy.intents.0.sets.outcome', message: "outcome is not one of the bot's analysis fields" },
    ]);
    expect(await h.db.collection(COLLECTIONS.bots).countDocuments()).toBe(count);
    expect(await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never })).toEqual(before);
  });

  it('a bot stored before analysis existed reads with the default (none)', async () => {
    const id = (await post({ name: 'Old' }).expect(201)).body.id as string;
    await h.db.collection(COLLECTIONS.bots).updateOne({ _id: id as never }, { $unset: { analysis: '' } });
    expect((await h.http.get(`/api/v1/bots/${id}`).set('Authorization', auth).expect(200)).body.analysis).toEqual({ summary: false, fields: [], success: null });
  });

  it('requires an admin token', async () => {
    expect((await h.http.post('/api/v1/bots').send({ name: 'x' }).expect(401)).body.error.code).toBe('unauthorized');
    expect((await h.http.get('/api/v1/bots').set('Authorization', 'Bearer x.y.z').expect(401)).body.error.code).toBe('unauthorized');
  });
});

// The documented shapes, checked by an ajv of the test's own (not the backend's validator).
const schemas = (addFormatsModule as unknown as (a: Ajv) => Ajv)(new Ajv({ allErrors: true, strict: false }));
const validBot = schemas.compile(Bot);
const validConfig = schemas.compile(RuntimeConfig);
const shapeErrors = (fn: ValidateFunction, value: unknown) => (fn(value) ? [] : fn.errors);

describe('every stored bot comes back in the documented shape', () => {
  /** A bot stored before `tools` and `turn_detection` existed (and with sparse variables). */
  const legacy = (id: string) => ({
    _id: id,
    name: 'Legacy',
    active: true,
    language: 'en-US',
    prompt: 'Hi {{customer_name}}',
    greeting: 'Hello {{customer_name}}',
    variables: [{ name: 'customer_name', required: true }],
    voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 },
    stt: { provider: 'pocketsphinx', model: 'en-us', language: 'en-US' },
    llm: { provider: 'scripted', model: 'policy', temperature: 0 },
    policy: null,
    max_call_seconds: 120,
    created_at: new Date(),
    updated_at: new Date(),
  });

  it('fills the defaults of fields an old document lacks, in the list, the bot and the runtime config', async () => {
    await h.db.collection(COLLECTIONS.bots).insertOne(legacy('legacy-bot') as never);
    const list = await h.http.get('/api/v1/bots').set('Authorization', auth).expect(200);
    for (const item of list.body.items) expect(shapeErrors(validBot, item)).toEqual([]);
    const one = await h.http.get('/api/v1/bots/legacy-bot').set('Authorization', auth).expect(200);
    expect(shapeErrors(validBot, one.body)).toEqual([]);
    expect(one.body).toMatchObject({ tools: [], turn_detection: { mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 }, interruption: { ignore_backchannels: true, min_words: 2 }, dtmf: { inter_digit_timeout_ms: 1500 }, variables: [{ name: 'customer_name', required: true, description: '' }], max_call_seconds: 120 });
    const config = await h.http.get('/api/v1/config').query({ bot_id: 'legacy-bot' }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
    expect(shapeErrors(validConfig, config.body)).toEqual([]);
    expect(config.body.bot).toMatchObject({ tools: [], turn_detection: { end_of_turn_silence_ms: 700 }, dtmf: { inter_digit_timeout_ms: 1500 } });
    // An edit of an old bot stores every field.
    await h.http.patch('/api/v1/bots/legacy-bot').set('Authorization', auth).send({ name: 'Legacy, edited' }).expect(200);
    expect(await h.db.collection(COLLECTIONS.bots).findOne({ _id: 'legacy-bot' as never })).toMatchObject({ tools: [], turn_detection: { end_of_turn_silence_ms: 700 }, dtmf: { inter_digit_timeout_ms: 1500 } });
  });

  it('the seeded demo bot is stored with every field and reads back in the documented shape', async () => {
    expect(await seedDemoBot(h.db, new Date())).toBe('created');
    expect(await seedDemoBot(h.db, new Date())).toBe('unchanged');
    const stored = await h.db.collection(COLLECTIONS.bots).findOne({ _id: DEMO_BOT_ID as never });
    const { _id, created_at, updated_at, ...fields } = stored!;
    // Every answered field is stored, has_tool_secret as the sealed secret it is derived from.
    const answered = Object.keys(Bot.properties).map((k) => (k === 'has_tool_secret' ? 'tool_secret_sealed' : k));
    expect(Object.keys(fields).sort()).toEqual(answered.filter((k) => !['id', 'created_at', 'updated_at'].includes(k)).sort());
    const one = await h.http.get(`/api/v1/bots/${DEMO_BOT_ID}`).set('Authorization', auth).expect(200);
    expect(shapeErrors(validBot, one.body)).toEqual([]);
    const list = await h.http.get('/api/v1/bots').set('Authorization', auth).expect(200);
    expect(list.body.items.map((b: { id: string }) => b.id)).toContain(DEMO_BOT_ID);
    for (const item of list.body.items) expect(shapeErrors(validBot, item)).toEqual([]);
    const config = await h.http.get('/api/v1/config').query({ bot_id: DEMO_BOT_ID }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
    expect(shapeErrors(validConfig, config.body)).toEqual([]);
  });

  it('the boot migration stores the missing fields once and leaves present ones alone', async () => {
    await h.db.collection(COLLECTIONS.bots).insertOne({ ...legacy('legacy-boot'), turn_detection: { end_of_turn_silence_ms: 900 } } as never);
    await migrateBots(h.db);
    await migrateBots(h.db); // idempotent
    const doc = await h.db.collection(COLLECTIONS.bots).findOne({ _id: 'legacy-boot' as never });
    expect(doc).toMatchObject({ tools: [], turn_detection: { mode: 'smart', end_of_turn_silence_ms: 900, min_silence_ms: 250 }, max_call_seconds: 120 });
  });
});

describe('tool parameters are the user\'s JSON Schema', () => {
  const nest = (levels: number): Record<string, unknown> => {
    let v: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < levels; i++) v = { properties: v };
    return v;
  };

  it('stores any keys (NUL, $-prefixed, dotted) and nested arrays exactly, and serves them to the worker', async () => {
    const parameters = {
      type: 'object',
      $defs: { amount: { type: 'number' } },
      properties: { 'a.b': { $ref: '#/$defs/amount' }, 'nul\u0000key': { type: 'string' }, $weird: { enum: [[1, [2, [3]]], null] } },
    };
    const res = await h.http.post('/api/v1/bots').set('Authorization', auth).send({ name: 'tools', tools: [{ name: 'lookup', description: 'x', parameters }] }).expect(201);
    expect(res.body.tools[0].parameters).toEqual(parameters);
    const read = await h.http.get(`/api/v1/bots/${res.body.id}`).set('Authorization', auth).expect(200);
    expect(read.body.tools[0].parameters).toEqual(parameters);
    const cfg = await h.http.get(`/api/v1/config?bot_id=${res.body.id}`).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
    expect(cfg.body.bot.tools[0].parameters).toEqual(parameters);
    // An edit of another field keeps them; an edit of the tools replaces them.
    await h.http.patch(`/api/v1/bots/${res.body.id}`).set('Authorization', auth).send({ name: 'tools 2' }).expect(200);
    expect((await h.http.get(`/api/v1/bots/${res.body.id}`).set('Authorization', auth)).body.tools[0].parameters).toEqual(parameters);
  });

  it(`refuses parameters nesting deeper than 32 levels with 422, on create and on edit, storing nothing`, async () => {
    const before = await h.db.collection('bots').countDocuments();
    for (const levels of [32, 500, 5000]) {
      // Written as text: a 5,000-level object overflows the test's own JSON.stringify (and must fit 64 KiB).
      const deep = '{"a":'.repeat(levels) + '{"type":"string"}' + '}'.repeat(levels);
      const body = `{"name":"deep","tools":[{"name":"deep","description":"d","parameters":${deep}}]}`;
      const res = await h.http.post('/api/v1/bots').set('Authorization', auth).set('Content-Type', 'application/json').send(body);
      expect([levels, res.status]).toEqual([levels, 422]);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'tools.0.parameters', message: 'nests deeper than 32 levels' }] });
    }
    expect(await h.db.collection('bots').countDocuments()).toBe(before);
    const ok = await h.http.post('/api/v1/bots').set('Authorization', auth).send({ name: 'shallow', tools: [{ name: 'ok', description: 'd', parameters: nest(30) }] }).expect(201);
    const edit = await h.http.patch(`/api/v1/bots/${ok.body.id}`).set('Authorization', auth).send({ tools: [{ name: 'deep', description: 'd', parameters: nest(40) }] }).expect(422);
    expect(edit.body.error.details).toEqual([{ field: 'tools.0.parameters', message: 'nests deeper than 32 levels' }]);
    expect((await h.http.get(`/api/v1/bots/${ok.body.id}`).set('Authorization', auth)).body.tools[0].name).toBe('ok');
  });
});
