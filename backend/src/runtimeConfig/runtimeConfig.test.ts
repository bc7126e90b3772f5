import { ObjectId } from 'mongodb';
import { adminToken, createBot, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';
import { insertCall, queuedCall } from '../calls/store.js';

let h: Harness;
let auth: string;
let botId: string;
const worker = `Bearer ${WORKER_TOKEN}`;
const policy = {
  intents: [{ name: 'pay', examples: ['yes'], reply: 'Thanks {{customer_name}}', end_call: true }],
  fallback: { reply: 'Sorry?' },
};

beforeAll(async () => {
  h = await startHarness();
  auth = await adminToken(h);
  botId = await createBot(h, auth, {
    name: 'Config bot',
    prompt: 'Talk to {{customer_name}} about {{ amount_due }}.',
    greeting: 'Hi {{customer_name}}!',
    variables: [
      { name: 'customer_name', required: true, description: 'callee' },
      { name: 'amount_due', required: false, description: '' },
    ],
    policy,
  });
});
afterAll(() => h.close());

const config = (query: Record<string, string>, token: string | null = worker) => {
  const req = h.http.get('/api/v1/config').query(query);
  return token ? req.set('Authorization', token) : req;
};

describe('GET /api/v1/config', () => {
  it('requires the worker token, compared exactly', async () => {
    expect((await config({ bot_id: botId }, null).expect(401)).body.error.code).toBe('unauthorized');
    expect((await config({ bot_id: botId }, `Bearer ${WORKER_TOKEN}x`).expect(401)).body.error.code).toBe('unauthorized');
    expect((await config({ bot_id: botId }, `Bearer ${WORKER_TOKEN.slice(0, -1)}`).expect(401)).body.error.code).toBe('unauthorized');
    expect((await config({ bot_id: botId }, auth).expect(401)).body.error.code).toBe('unauthorized'); // an admin JWT is not a worker token
  });

  it('returns the bot with defaults and no call when no call_id is given', async () => {
    const res = await config({ bot_id: botId }).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      bot: {
        id: botId,
        name: 'Config bot',
        language: 'en-US',
        prompt: 'Talk to  about .',
        greeting: 'Hi !',
        voice: { provider: 'espeak-ng', voice_id: 'en-us', speed: 1 },
        stt: { provider: 'pocketsphinx', model: 'en-us', language: 'en-US' },
        llm: { provider: 'scripted', model: 'policy', temperature: 0 },
        tools: [],
        tool_secret: null,
        mcp_servers: [],
        knowledge_base_ids: [],
        policy,
        turn_detection: { mode: 'smart', end_of_turn_silence_ms: 700, min_silence_ms: 250 },
        interruption: { ignore_backchannels: true, min_words: 2 },
        dtmf: { inter_digit_timeout_ms: 1500 },
        answering_machine: { detect: false, on_machine: 'hangup', message: '', max_wait_for_beep_seconds: 30 },
        audio: { noise_suppression: false },
        redaction: { entities: [], mode: 'mask', redact_llm: false },
        recording: { enabled: true, redact_keypad_tones: false },
        max_call_seconds: 300,
        flow: null,
        handoff: null,
      },
      call: null,
      audio: { sample_rate: 16000 },
    });
  });

  it("renders prompt and greeting with the call's variables", async () => {
    const call = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: botId, direction: 'websocket', variables: { customer_name: 'Ada', amount_due: '12.50 EUR' } }).expect(201);
    const res = await config({ bot_id: botId, call_id: call.body.call_id }).expect(200);
    expect(res.body.bot.prompt).toBe('Talk to Ada about 12.50 EUR.');
    expect(res.body.bot.greeting).toBe('Hi Ada!');
    expect(res.body.bot.policy).toEqual(policy);
    expect(res.body.call).toEqual({ id: call.body.call_id, direction: 'websocket', to_number: null, variables: { customer_name: 'Ada', amount_due: '12.50 EUR' } });
  });

  it('templates=raw answers prompt and greeting as written (a handoff: the worker renders them); any other value is 422', async () => {
    const res = await config({ bot_id: botId, templates: 'raw' }).expect(200);
    expect(res.body.bot.prompt).toBe('Talk to {{customer_name}} about {{ amount_due }}.');
    expect(res.body.bot.greeting).toBe('Hi {{customer_name}}!');
    const bad = await config({ bot_id: botId, templates: 'rendered' }).expect(422);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'templates', message: 'must be raw (or left out)' }] });
  });

  it("gives a campaign's call its campaign's answering machine settings over the bot's", async () => {
    const bot = await createBot(h, auth, { name: 'Screening bot', answering_machine: { detect: false, message: 'Call us back, {{customer_name}}.' }, variables: [{ name: 'customer_name', required: false, description: '' }] });
    const campaign = new ObjectId().toHexString();
    await h.db.collection(COLLECTIONS.campaigns).insertOne({ _id: campaign as never, answering_machine: { detect: true, on_machine: 'leave_message' } });
    const id = new ObjectId().toHexString();
    await insertCall(h.db, { ...queuedCall({ _id: id, bot_id: bot, direction: 'outbound', to_number: '+15005550100', from_number: '+15550001111', variables: {}, api_key_id: null }, new Date()), campaign_id: campaign });
    const res = await config({ bot_id: bot, call_id: id }).expect(200);
    expect(res.body.bot.answering_machine).toEqual({ detect: true, on_machine: 'leave_message', message: 'Call us back, {{customer_name}}.', max_wait_for_beep_seconds: 30 });
    // Without a campaign: the bot's.
    expect((await config({ bot_id: bot }).expect(200)).body.bot.answering_machine).toEqual({ detect: false, on_machine: 'hangup', message: 'Call us back, {{customer_name}}.', max_wait_for_beep_seconds: 30 });
  });

  it('answers 404 for unknown bots and calls, 409 for inactive bots, 422 without bot_id', async () => {
    expect((await config({ bot_id: 'nope' }).expect(404)).body.error.code).toBe('bot_not_found');
    expect((await config({ bot_id: botId, call_id: 'nope' }).expect(404)).body.error.code).toBe('call_not_found');
    const other = await createBot(h, auth, { name: 'other' });
    const call = await h.http.post('/api/v1/calls').set('Authorization', worker).send({ bot_id: other, direction: 'web' }).expect(201);
    expect((await config({ bot_id: botId, call_id: call.body.call_id }).expect(404)).body.error.code).toBe('call_not_found');
    await h.http.patch(`/api/v1/bots/${other}`).set('Authorization', auth).send({ active: false }).expect(200);
    expect((await config({ bot_id: other }).expect(409)).body.error.code).toBe('bot_inactive');
    expect((await config({}).expect(422)).body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'bot_id', message: expect.any(String) }] });
  });
});
