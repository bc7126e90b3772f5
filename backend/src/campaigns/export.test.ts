// GET /api/v1/campaigns/{id}/contacts.csv on real stores: the contacts of a campaign in every state (not
// dialled, completed by a person, a machine, busy and scheduled for a retry, in a call right now), dialled and
// settled through the campaign store's own writes (recordDial, settleContact) with call records stored as
// the backend stores them. The CSV matches the contacts API row for row (also with its status filter, and
// whatever the page size it is read in), quotes RFC 4180 style and defuses spreadsheet formulas.
import { ObjectId } from 'mongodb';
import { adminToken, createBot, startHarness, type Harness } from '../../testing/harness.js';
import { createLogger } from '../core/logger.js';
import { insertCall, queuedCall, type CallDoc } from '../calls/store.js';
import { parseCsv } from './csv.js';
import { contacts, recordDial, settleContact, type CampaignDeps } from './store.js';
import { contactsCsv, csvCell, csvLine } from './export.js';
import { findBot } from '../bots/store.js';

let h: Harness;
let auth: string;
let botId: string;
let deps: CampaignDeps;

const BOT = {
  prompt: 'Remind {{customer_name}}.',
  variables: [
    { name: 'customer_name', required: true, description: '' },
    { name: 'plan', required: false, description: '' },
    { name: 'note', required: false, description: '' },
  ],
};
const HEADER = ['contact_id', 'to_number', 'status', 'attempts', 'last_call_id', 'last_call_status', 'last_end_reason', 'answered_by', 'amd_ms', 'next_attempt_at'];

beforeAll(async () => {
  h = await startHarness();
  auth = await adminToken(h);
  botId = await createBot(h, auth, BOT);
  deps = { db: h.db, redis: h.redis, logger: createLogger('silent'), clock: h.clock.now };
});
afterAll(() => h?.close());

const admin = () => ({ Authorization: auth });
let numberSeq = 4_915_200_000_000;
const freshNumber = () => `+${numberSeq++}`;

async function createCampaign(): Promise<string> {
  const res = await h.http
    .post('/api/v1/campaigns')
    .set(admin())
    .send({ name: 'Export', bot_id: botId, timezone: 'Europe/Berlin', windows: [], max_concurrency: 5, calls_per_second: 10, retry: { max_attempts: 2, delay_seconds: 600, on: ['busy'] } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** Dials the contact's next attempt as call `status` (terminal ones settle the contact), the way the dialler and the lifecycle do. */
async function dial(campaignId: string, contactId: string, status: CallDoc['status'], extra: Partial<CallDoc> = {}): Promise<string> {
  const c = await contacts(h.db).findOne({ _id: contactId });
  const attempt = (c?.attempts ?? []).length + 1;
  const id = new ObjectId().toHexString();
  const at = new Date(h.clock.ms);
  await recordDial(deps, contactId, id, attempt, at);
  const queued = queuedCall({ _id: id, bot_id: botId, direction: 'outbound', to_number: c!.to_number, from_number: '+15550001000', variables: c!.variables, api_key_id: null, campaign_id: campaignId, campaign_contact_id: contactId, campaign_attempt: attempt }, at);
  const terminal = ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(status);
  const doc: CallDoc = { ...queued, status, started_at: at, ended_at: terminal ? at : null, status_times: { queued: at, [status]: at }, ...extra };
  await insertCall(h.db, doc);
  if (terminal) await settleContact(deps, doc);
  h.clock.advance(1000);
  return id;
}

interface ApiContact {
  id: string;
  to_number: string;
  status: string;
  variables: Record<string, string>;
  attempts: Array<{ call_id: string; status: string; end_reason: string | null }>;
  next_attempt_at: string | null;
}
async function apiContacts(id: string, query = ''): Promise<ApiContact[]> {
  const out: ApiContact[] = [];
  let cursor: string | null = null;
  do {
    const res = await h.http.get(`/api/v1/campaigns/${id}/contacts?limit=3${query}${cursor ? `&cursor=${cursor}` : ''}`).set(admin()).expect(200);
    out.push(...(res.body.items as ApiContact[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return out;
}
/** The export's rows as objects by column, the header first. */
function readExport(text: string): { header: string[]; rows: Array<Record<string, string>> } {
  const [header, ...rows] = parseCsv(text);
  return { header: header!, rows: rows.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i]!]))) };
}

describe('csvCell', () => {
  it('quotes RFC 4180 style and defuses formulas, but leaves plain numbers alone', () => {
    expect(['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\r', '', null, undefined, 42, true].map(csvCell)).toEqual(['plain', '"a,b"', '"say ""hi"""', '"two\nlines"', '"cr\r"', '', '', '', '42', 'true']);
    expect(['=1+1', '+SUM(A1)', '-1+2', '@cmd', '\tx', '\rx', '=HYPERLINK("http://x","y")'].map(csvCell)).toEqual([
      "'=1+1",
      "'+SUM(A1)",
      "'-1+2",
      "'@cmd",
      "'\tx",
      `"'\rx"`,
      `"'=HYPERLINK(""http://x"",""y"")"`,
    ]);
    expect(['+4915112345678', '-42', '12'].map(csvCell)).toEqual(['+4915112345678', '-42', '12']);
    expect(csvLine(['a', null, 'b,c'])).toBe('a,,"b,c"\r\n');
  });
});

describe('GET /api/v1/campaigns/{id}/contacts.csv', () => {
  let campaignId: string;
  const ids: Record<string, string> = {};
  const calls: Record<string, string> = {};

  beforeAll(async () => {
    campaignId = await createCampaign();
    const rows = [
      { key: 'human', variables: { customer_name: 'Ada', plan: '=HYPERLINK("http://evil.example","click")' } },
      { key: 'machine', variables: { customer_name: 'Bob', plan: '+SUM(A1:A2)', note: 'a, "quoted"\nsecond line' } },
      { key: 'busy', variables: { customer_name: '@cmd', note: '-42' } },
      { key: 'live', variables: { customer_name: '-1+2' } },
      { key: 'pending', variables: { customer_name: 'Dee' } },
      ...Array.from({ length: 6 }, (_, i) => ({ key: `more${i}`, variables: { customer_name: `Eve ${i}` } })),
    ];
    for (const r of rows) {
      // One upload each: each contact its own created_at, so the order is the upload order.
      await h.http.post(`/api/v1/campaigns/${campaignId}/contacts`).set(admin()).send({ contacts: [{ to_number: freshNumber(), variables: r.variables }] }).expect(200);
      h.clock.advance(1000);
      ids[r.key] = (await contacts(h.db).find({ campaign_id: campaignId }).sort({ created_at: -1, _id: -1 }).limit(1).next())!._id;
    }
    calls.human = await dial(campaignId, ids.human!, 'completed', { end_reason: 'bot_hangup', answered_by: 'human', amd_ms: 900 });
    calls.machine = await dial(campaignId, ids.machine!, 'completed', { end_reason: 'voicemail', answered_by: 'machine', amd_ms: 2400 });
    calls.busy = await dial(campaignId, ids.busy!, 'busy', { end_reason: 'busy' });
    await dial(campaignId, ids.live!, 'busy', { end_reason: 'busy' }); // retried: its second attempt is live
    calls.live = await dial(campaignId, ids.live!, 'in_progress', { answered_by: 'human', amd_ms: 1100 });
    // A variable the bot no longer declares (kept from before a bot change): a column of its own, after the declared ones.
    await contacts(h.db).updateOne({ _id: ids.more0! }, { $set: { 'variables.zeta': 'kept' } });
  });

  it('has one row per contact, matching the contacts API row for row, with the last call beside it', async () => {
    const res = await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv`).set(admin()).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="campaign-${campaignId}-contacts.csv"`);
    const text = res.text;
    expect(text.endsWith('\r\n')).toBe(true);
    const { header, rows } = readExport(text);
    expect(header).toEqual([...HEADER, 'var_customer_name', 'var_plan', 'var_note', 'var_zeta']);
    const api = await apiContacts(campaignId);
    expect(api).toHaveLength(11);
    expect(rows.map((r) => r.contact_id)).toEqual(api.map((c) => c.id));
    for (const [i, c] of api.entries()) {
      const last = c.attempts[c.attempts.length - 1];
      const row = rows[i]!;
      expect(row).toMatchObject({
        contact_id: c.id,
        to_number: c.to_number,
        status: c.status,
        attempts: String(c.attempts.length),
        last_call_id: last?.call_id ?? '',
        next_attempt_at: c.next_attempt_at ?? '',
      });
      // Settled calls: the attempt's outcome, as the contacts API shows it.
      if (c.id !== ids.live) expect([c.id, row.last_call_status, row.last_end_reason]).toEqual([c.id, last?.status ?? '', last?.end_reason ?? '']);
      for (const [name, value] of Object.entries(c.variables)) expect(row[`var_${name}`]!.replace(/^'/, '')).toBe(value);
    }
    const by = (key: string) => rows.find((r) => r.contact_id === ids[key])!;
    expect(by('human')).toMatchObject({ status: 'completed', attempts: '1', last_call_id: calls.human, last_call_status: 'completed', last_end_reason: 'bot_hangup', answered_by: 'human', amd_ms: '900' });
    expect(by('machine')).toMatchObject({ status: 'completed', last_call_status: 'completed', last_end_reason: 'voicemail', answered_by: 'machine', amd_ms: '2400' });
    const busy = api.find((c) => c.id === ids.busy)!;
    expect(busy.next_attempt_at).toEqual(expect.any(String));
    expect(by('busy')).toMatchObject({ status: 'retry_scheduled', last_call_status: 'busy', last_end_reason: 'busy', answered_by: '', amd_ms: '', next_attempt_at: busy.next_attempt_at });
    // A call in progress: its record's status (the attempt says `queued` until it ends).
    expect(api.find((c) => c.id === ids.live)!.attempts.map((a) => a.status)).toEqual(['busy', 'queued']);
    expect(by('live')).toMatchObject({ status: 'dialing', attempts: '2', last_call_id: calls.live, last_call_status: 'in_progress', last_end_reason: '', answered_by: 'human', amd_ms: '1100' });
    expect(by('pending')).toMatchObject({ status: 'pending', attempts: '0', last_call_id: '', last_call_status: '', last_end_reason: '', answered_by: '', amd_ms: '', next_attempt_at: '' });
    expect(by('more0')).toMatchObject({ var_zeta: 'kept', var_plan: '', var_note: '' });

    // Formulas defused, quoting round-trips, numbers (the phone numbers, -42) left as they are.
    expect(by('human').var_plan).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(text).toContain(`,"'=HYPERLINK(""http://evil.example"",""click"")",`);
    expect(by('machine')).toMatchObject({ var_plan: "'+SUM(A1:A2)", var_note: 'a, "quoted"\nsecond line' });
    expect(by('busy')).toMatchObject({ var_customer_name: "'@cmd", var_note: '-42' });
    expect(by('live').var_customer_name).toBe("'-1+2");
    expect(rows.every((r) => /^\+[0-9]+$/.test(r.to_number!))).toBe(true);
  });

  it("takes the contacts API's status filter, and nothing of its paging", async () => {
    for (const status of ['pending', 'completed', 'canceled']) {
      const { rows } = readExport((await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv?status=${status}`).set(admin()).expect(200)).text);
      expect([status, rows.map((r) => r.contact_id)]).toEqual([status, (await apiContacts(campaignId, `&status=${status}`)).map((c) => c.id)]);
    }
    const refused = async (q: string, field: string) => {
      const res = await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv?${q}`).set(admin()).expect(422);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    };
    await refused('status=bogus', 'status');
    await refused('limit=5', 'limit');
    await refused('sort=name', 'sort');
  });

  it('reads the same file whatever the page size', async () => {
    const full = (await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv`).set(admin()).expect(200)).text;
    const bot = await findBot(h.db, botId);
    for (const size of [1, 4, 11, 12]) {
      let text = '';
      for await (const chunk of await contactsCsv(h.db, bot, { campaign_id: campaignId }, size)) text += String(chunk);
      expect([size, text]).toEqual([size, full]);
    }
  });

  it('is admin only, and 404 for an unknown campaign; an empty campaign is its header line', async () => {
    expect((await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv`).expect(401)).body.error.code).toBe('unauthorized');
    expect((await h.http.get(`/api/v1/campaigns/${new ObjectId().toHexString()}/contacts.csv`).set(admin()).expect(404)).body.error.code).toBe('not_found');
    const empty = await createCampaign();
    const res = await h.http.get(`/api/v1/campaigns/${empty}/contacts.csv`).set(admin()).expect(200);
    expect(res.text).toBe(`${[...HEADER, 'var_customer_name', 'var_plan', 'var_note'].join(',')}\r\n`);
  });
});

describe('the post-call analysis columns', () => {
  it("a bot with analysis settings adds analysis_status, analysis_summary, analysis_success and data_<field> from the last call", async () => {
    const analysed = await createBot(h, auth, {
      ...BOT,
      analysis: { summary: true, fields: [{ name: 'outcome', type: 'enum', values: ['paid', 'promised'] }, { name: 'amount', type: 'number' }], success: 'The caller promised to pay.' },
    });
    const res = await h.http
      .post('/api/v1/campaigns')
      .set(admin())
      .send({ name: 'Analysed', bot_id: analysed, timezone: 'Europe/Berlin', windows: [], max_concurrency: 5, calls_per_second: 10, retry: { max_attempts: 1, delay_seconds: 600, on: ['busy'] } })
      .expect(201);
    const campaignId = res.body.id as string;
    const numbers = [freshNumber(), freshNumber(), freshNumber()];
    await h.http.post(`/api/v1/campaigns/${campaignId}/contacts`).set(admin()).send({ contacts: numbers.map((n) => ({ to_number: n, variables: { customer_name: 'Ada' } })) }).expect(200);
    const [done, pending] = await contacts(h.db).find({ campaign_id: campaignId }).sort({ created_at: 1, _id: 1 }).limit(2).toArray();
    const analysis = { status: 'done' as const, summary: '=The caller promised, "soon".', data: { outcome: 'promised', amount: 40 }, success: true, error: null, completed_at: new Date(h.clock.ms) };
    const dialAs = (contactId: string, extra: Partial<CallDoc>) => dial(campaignId, contactId, 'completed', { end_reason: 'bot_hangup', bot_id: analysed, ...extra });
    await dialAs(done!._id, { analysis });
    await dialAs(pending!._id, { analysis: { status: 'pending', summary: null, data: null, success: null, error: null, completed_at: null } });
    const { header, rows } = readExport((await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv`).set(admin()).expect(200)).text);
    expect(header).toEqual([...HEADER, 'analysis_status', 'analysis_summary', 'analysis_success', 'data_outcome', 'data_amount', 'var_customer_name', 'var_plan', 'var_note']);
    expect(rows.map((r) => [r.analysis_status, r.analysis_summary, r.analysis_success, r.data_outcome, r.data_amount])).toEqual([
      ['done', `'=The caller promised, "soon".`, 'true', 'promised', '40'],
      ['pending', '', '', '', ''],
      ['', '', '', '', ''],
    ]);
  });
});
