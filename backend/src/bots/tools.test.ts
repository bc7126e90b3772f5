// A bot's tools (docs/design.md §9): each type's fields, header values write-only (sealed at rest, never
// answered or logged, given to the worker only), the tool secret shown once, and every bad input a 422
// that changes nothing stored.
import { useAdminHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { COLLECTIONS } from '../core/collections.js';

let h: Harness;
let auth: string;
useAdminHarness((harness, token) => ([h, auth] = [harness, token]));

const HEADER_VALUE = 'Bearer crm-token-8c1f0b2e9d';
const promise = {
  name: 'record_promise',
  description: 'Records that the callee promised to pay',
  type: 'http',
  url: 'https://93.184.216.34/promises',
  headers: { Authorization: HEADER_VALUE, 'X-Tenant': 'acme' },
  timeout_ms: 3000,
  say_while_waiting: 'One moment please.',
  parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
};
const transfer = {
  name: 'to_agent',
  description: 'Hands the caller to a person',
  type: 'transfer_call',
  mode: 'warm',
  destinations: [{ name: 'billing', number: '+15005553000', description: 'the billing desk' }],
  announcement: 'Let me connect you.',
  whisper: 'Caller {{customer_name}} about an invoice.',
  on_failure: 'Nobody is free right now.',
};
const post = (body: object) => h.http.post('/api/v1/bots').set('Authorization', auth).send(body);
const patch = (id: string, body: object) => h.http.patch(`/api/v1/bots/${id}`).set('Authorization', auth).send(body);
const config = (id: string) => h.http.get(`/api/v1/config?bot_id=${id}`).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);

describe('bot tools', () => {
  it('keeps header values write-only: answers show header_names, the store holds them sealed, the worker gets them', async () => {
    const res = await post({ name: 'collector', tools: [promise, transfer, { name: 'hang_up', description: '', type: 'end_call' }, { name: 'keys', description: '', type: 'send_dtmf' }] }).expect(201);
    const { headers: _h, ...shown } = promise;
    expect(res.body.tools).toEqual([{ ...shown, method: undefined, header_names: ['Authorization', 'X-Tenant'] }, transfer, { name: 'hang_up', description: '', type: 'end_call' }, { name: 'keys', description: '', type: 'send_dtmf' }].map((t) => JSON.parse(JSON.stringify(t))));
    const read = await h.http.get(`/api/v1/bots/${res.body.id}`).set('Authorization', auth).expect(200);
    const list = await h.http.get('/api/v1/bots').set('Authorization', auth).expect(200);
    for (const text of [JSON.stringify(res.body), JSON.stringify(read.body), JSON.stringify(list.body), h.logs.join('\n')]) expect(text).not.toContain('crm-token');
    const doc = await h.db.collection(COLLECTIONS.bots).findOne({ _id: res.body.id });
    expect(JSON.stringify(doc)).not.toContain('crm-token');
    expect(JSON.stringify(doc)).not.toContain('acme');
    // The worker (its token only) gets the values to send.
    const cfg = await config(res.body.id);
    expect(cfg.body.bot.tools[0]).toEqual({ ...promise });
    expect(cfg.body.bot.tools[1]).toEqual(transfer);
    expect(cfg.body.bot.tool_secret).toBeNull();
  });

  it('an edit that leaves headers out keeps them, headers: {} removes them, new values replace them', async () => {
    const id = (await post({ name: 'editing', tools: [promise] }).expect(201)).body.id as string;
    const { headers: _h, ...noHeaders } = promise;
    expect((await patch(id, { tools: [{ ...noHeaders, timeout_ms: 4000 }] }).expect(200)).body.tools[0]).toMatchObject({ timeout_ms: 4000, header_names: ['Authorization', 'X-Tenant'] });
    expect((await config(id)).body.bot.tools[0].headers).toEqual(promise.headers);
    await patch(id, { tools: [{ ...noHeaders, headers: { Authorization: 'Bearer new' } }] }).expect(200);
    expect((await config(id)).body.bot.tools[0].headers).toEqual({ Authorization: 'Bearer new' });
    const cleared = await patch(id, { tools: [{ ...noHeaders, headers: {} }] }).expect(200);
    expect(cleared.body.tools[0].header_names).toBeUndefined();
    expect((await config(id)).body.bot.tools[0].headers).toBeUndefined();
  });

  it('a tool that changes type under the same name leaves its headers behind', async () => {
    const id = (await post({ name: 'retyped', tools: [promise] }).expect(201)).body.id as string;
    const res = await patch(id, { tools: [{ name: promise.name, description: '', type: 'end_call' }] }).expect(200);
    expect(res.body.tools[0]).toEqual({ name: promise.name, description: '', type: 'end_call' });
    expect((await config(id)).body.bot.tools[0]).toEqual({ name: promise.name, description: '', type: 'end_call' });
  });

  it('creates and rotates the tool secret, shown once (no-store), given to the worker only', async () => {
    const id = (await post({ name: 'signed', tools: [promise] }).expect(201)).body.id as string;
    const first = await h.http.post(`/api/v1/bots/${id}/tool-secret`).set('Authorization', auth).expect(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toEqual({ bot_id: id, secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{32}$/) });
    const bot = await h.http.get(`/api/v1/bots/${id}`).set('Authorization', auth).expect(200);
    expect(bot.body.has_tool_secret).toBe(true);
    expect(JSON.stringify(bot.body)).not.toContain(first.body.secret);
    expect((await config(id)).body.bot.tool_secret).toBe(first.body.secret);
    const second = await h.http.post(`/api/v1/bots/${id}/tool-secret`).set('Authorization', auth).expect(200);
    expect(second.body.secret).not.toBe(first.body.secret);
    expect((await config(id)).body.bot.tool_secret).toBe(second.body.secret);
    expect(JSON.stringify(await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never }))).not.toContain(second.body.secret);
    expect(h.logs.join('\n')).not.toContain(second.body.secret);
    // An edit of the bot keeps it; an unknown bot has none to rotate; a key holder cannot.
    await patch(id, { name: 'signed 2' }).expect(200);
    expect((await config(id)).body.bot.tool_secret).toBe(second.body.secret);
    expect((await h.http.post('/api/v1/bots/nope/tool-secret').set('Authorization', auth).expect(404)).body.error.code).toBe('bot_not_found');
    await h.http.post(`/api/v1/bots/${id}/tool-secret`).expect(401);
  });

  it('stores and answers transfer numbers as E.164, the test phone\'s agent numbers included', async () => {
    const destinations = [
      { name: 'sales', number: '+1 (415) 555-0100' },
      { name: 'germany', number: '+49 151 1234 5678' },
      { name: 'agent', number: '+15005553000' },
      { name: 'busy agent', number: '+1 500-555-3486' },
      { name: 'pbx', sip_uri: 'sip:desk@pbx.example.com' },
    ];
    const e164 = ['+14155550100', '+4915112345678', '+15005553000', '+15005553486'];
    const expected = [...e164.map((number, i) => ({ name: destinations[i]!.name, number })), destinations[4]];
    const res = await post({ name: 'dials', tools: [{ ...transfer, mode: 'cold', whisper: undefined, destinations }] }).expect(201);
    expect(res.body.tools[0].destinations).toEqual(expected);
    expect((await config(res.body.id)).body.bot.tools[0].destinations).toEqual(expected);
    const doc = await h.db.collection(COLLECTIONS.bots).findOne({ _id: res.body.id });
    expect(doc!.tools[0].destinations).toEqual(expected);
    const edited = await patch(res.body.id, { tools: [{ ...transfer, destinations: [{ name: 'desk', number: '+1 415-555-0199' }] }] }).expect(200);
    expect(edited.body.tools[0].destinations).toEqual([{ name: 'desk', number: '+14155550199' }]);
  });

  it('takes a per-bot llm.base_url', async () => {
    const res = await post({ name: 'local llm', llm: { provider: 'openai', model: 'llama3', temperature: 0.2, base_url: 'http://127.0.0.1:11434/v1' } }).expect(201);
    expect((await config(res.body.id)).body.bot.llm).toEqual({ provider: 'openai', model: 'llama3', temperature: 0.2, base_url: 'http://127.0.0.1:11434/v1' });
  });

  describe('bad tools: a clear 422 naming the field, and nothing stored changes', () => {
    const { headers: _h, ...plain } = promise;
    const cases: Array<[string, object, string]> = [
      ['a URL on a private address', { ...plain, url: 'http://127.0.0.1:8080/x' }, 'tools.0.url'],
      ['a URL on a link-local address', { ...plain, url: 'http://169.254.169.254/latest' }, 'tools.0.url'],
      ['a URL that is not http', { ...plain, url: 'ftp://93.184.216.34/x' }, 'tools.0.url'],
      ['a URL with credentials', { ...plain, url: 'https://u:p@93.184.216.34/x' }, 'tools.0.url'],
      ['an http tool without a URL', { name: 'x', description: '', type: 'http' }, 'tools.0.url'],
      ['parameters that are not a schema', { ...plain, parameters: { type: 'object', properties: 5 } }, 'tools.0.parameters'],
      ['parameters that are not an object schema', { ...plain, parameters: { type: 'string' } }, 'tools.0.parameters'],
      ['a field of another type', { name: 'bye', description: '', type: 'end_call', url: 'https://93.184.216.34' }, 'tools.0.url'],
      ['a destination with both a number and a SIP URI', { ...transfer, destinations: [{ name: 'x', number: '+15005553000', sip_uri: 'sip:a@b.example.com' }] }, 'tools.0.destinations.0'],
      ['a whisper in cold mode', { ...transfer, mode: 'cold' }, 'tools.0.whisper'],
      ['a SIP URI in warm mode', { ...transfer, destinations: [{ name: 'x', sip_uri: 'sip:desk@pbx.example.com' }] }, 'tools.0.destinations.0.sip_uri'],
      ['a header value with a line break', { ...plain, headers: { 'X-A': 'a\r\nInjected: 1' } }, 'tools.0.headers.X-A'],
      ['11 headers', { ...plain, headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-${i}`, 'v'])) }, 'tools.0.headers'],
      ['a timeout under 500 ms', { ...plain, timeout_ms: 100 }, 'tools.0.timeout_ms'],
    ];
    it.each(cases)('%s', async (_what, tool, field) => {
      const id = (await post({ name: 'kept', tools: [promise] }).expect(201)).body.id as string;
      const before = await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never });
      const count = await h.db.collection(COLLECTIONS.bots).countDocuments();
      const created = await post({ name: 'bad', tools: [tool] }).expect(422);
      expect(created.body.error.code).toBe('validation_failed');
      expect(created.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      const edited = await patch(id, { tools: [tool] }).expect(422);
      expect(edited.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      expect(await h.db.collection(COLLECTIONS.bots).countDocuments()).toBe(count);
      expect(await h.db.collection(COLLECTIONS.bots).findOne({ _id: id as never })).toEqual(before);
    });

    it('a scripted intent acts with an http, transfer_call or send_dtmf tool of the bot; not with one that hangs up or one it lacks', async () => {
      const tools = [promise, transfer, { name: 'keys', description: '', type: 'send_dtmf' }, { name: 'bye', description: '', type: 'end_call' }];
      const policy = (tool: string) => ({ intents: [{ name: 'act', examples: ['do it'], reply: 'Done.', action: { tool } }], fallback: { reply: 'Sorry?' } });
      for (const ok of ['record_promise', 'to_agent', 'keys']) await post({ name: `acts with ${ok}`, tools, policy: policy(ok) }).expect(201);
      const count = await h.db.collection(COLLECTIONS.bots).countDocuments();
      const hangsUp = await post({ name: 'bad', tools, policy: policy('bye') }).expect(422);
      expect(hangsUp.body.error.details).toEqual([{ field: 'policy.intents.0.action.tool', message: 'bye is not an http, transfer_call or send_dtmf tool (to hang up, set end_call)' }]);
      const missing = await post({ name: 'bad', tools, policy: policy('nope') }).expect(422);
      expect(missing.body.error.details).toEqual([{ field: 'policy.intents.0.action.tool', message: "nope is not one of the bot's tools" }]);
      // A name outside the pattern is refused, whatever its value (found by the fuzz suite: a 500 on an
      // argument named "4JUqORW0?" holding an object).
      for (const arguments_ of [{ 'a.b': 'x' }, { 'ok': 'x', 'not ok?': {} }]) {
        const bad = await post({ name: 'bad', tools, policy: { intents: [{ name: 'act', examples: ['do it'], reply: 'Done.', action: { tool: 'record_promise', arguments: arguments_ } }], fallback: { reply: 'Sorry?' } } }).expect(422);
        expect(bad.body.error.details.map((d: { field: string }) => d.field).join(' ')).toMatch(/policy\.intents\.0\.action\.arguments/);
      }
            // Keys are 0-9, * and #: anything else names the field.
      const keys = await post({ name: 'bad', tools, policy: { intents: [{ name: 'keys', examples: [], dtmf: '12a', reply: 'x' }], fallback: { reply: 'Sorry?' } } }).expect(422);
      expect(keys.body.error.details.map((d: { field: string }) => d.field)).toContain('policy.intents.0.dtmf');
      expect(await h.db.collection(COLLECTIONS.bots).countDocuments()).toBe(count);
    });

    it('a destination number that cannot exist is a 422 naming the number and libphonenumber\'s reason; a national one has no region to be read in', async () => {
      const count = await h.db.collection(COLLECTIONS.bots).countDocuments();
      const numbers = ['12345', '+1 555 0100 000 000', '(415) 555-0100', '+1 415 555 0100 x12'];
      const res = await post({ name: 'bad', tools: [{ ...transfer, destinations: numbers.map((number, i) => ({ name: `d${i}`, number })) }] }).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([
        { field: 'tools.0.destinations.0.number', message: 'invalid country calling code' },
        { field: 'tools.0.destinations.1.number', message: 'too long' },
        { field: 'tools.0.destinations.2.number', message: 'invalid country calling code' },
        { field: 'tools.0.destinations.3.number', message: 'must not have an extension' },
      ]);
      expect(await h.db.collection(COLLECTIONS.bots).countDocuments()).toBe(count);
    });

        it('51 tools, or two with one name', async () => {
      const many = Array.from({ length: 51 }, (_, i) => ({ name: `t${i}`, description: '', type: 'end_call' }));
      expect((await post({ name: 'many', tools: many }).expect(422)).body.error.code).toBe('validation_failed');
      const twice = await post({ name: 'twice', tools: [{ name: 'a', description: '', type: 'end_call' }, { name: 'a', description: '', type: 'send_dtmf' }] }).expect(422);
      expect(twice.body.error.details).toEqual([{ field: 'tools.1.name', message: 'a names another tool already' }]);
    });
  });
});
