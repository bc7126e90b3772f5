// Phone numbers through libphonenumber (docs/design.md §13) on real stores and the suite's LiveKit: national
// formats normalised to E.164 with a default region (a campaign's default_region, else its caller ID's
// country; a dial-out's default_region, else its caller ID's), numbers that cannot exist refused with the
// reason in the documented 422 shape (per row for contacts), the test phone's numbers kept.
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, createKey, createTrunk, heartbeat, startHarness, type Harness } from '../../testing/harness.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let botId: string;
let key: string;
const trunkIds: string[] = [];
const DE_CALLER_ID = '+4930901820';

beforeAll(async () => {
  env = await startTestEnv(['redis']);
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { DIALOUT_BURST: '1000', DIALOUT_RATE_PER_SECOND: '1000' } });
  auth = await adminToken(h);
  // The default trunk: a US caller ID written with punctuation, stored as E.164.
  const us = await createTrunk(h, auth, { name: 'us', numbers: ['+1 (555) 000-2000'], default: true });
  const de = await createTrunk(h, auth, { name: 'de', numbers: ['+49 30 901820'] });
  trunkIds.push(us.id, de.id);
  expect([us.numbers, de.numbers]).toEqual([['+15550002000'], [DE_CALLER_ID]]);
  botId = await createBot(h, auth, { variables: [{ name: 'customer_name', required: false, description: '' }] });
  key = (await createKey(h, auth)).key;
  await heartbeat(h.redis, 'w1', { max_calls: 1000 }, h.clock.ms + 3_600_000);
});
afterAll(async () => {
  for (const id of trunkIds) await h.http.delete(`/api/v1/sip/outbound-trunks/${id}`).set('Authorization', auth);
  await h.close();
  await env.stop();
});

const admin = () => ({ Authorization: auth });
const campaignBody = (over: Record<string, unknown> = {}) => ({
  name: 'numbers',
  bot_id: botId,
  timezone: 'UTC',
  windows: [],
  max_concurrency: 1,
  calls_per_second: 1,
  retry: { max_attempts: 1, delay_seconds: 60, on: [] },
  ...over,
});
const csv = (id: string, text: string) => h.http.post(`/api/v1/campaigns/${id}/contacts`).set(admin()).set('Content-Type', 'text/csv').send(text).expect(200);
const listed = async (id: string) => ((await h.http.get(`/api/v1/campaigns/${id}/contacts`).set(admin()).expect(200)).body.items as Array<{ to_number: string }>).map((c) => c.to_number).sort();

describe('campaign contacts', () => {
  it('CSV rows in national format import as E.164 in the default_region; impossible ones are rejected per row with the reason', async () => {
    const created = await h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody({ default_region: 'US' })).expect(201);
    expect(created.body).toMatchObject({ default_region: 'US', from_number: null });
    const id = created.body.id as string;
    const res = await csv(
      id,
      [
        'to_number,customer_name',
        '(415) 555-0100,Ada', // national, US
        '+1 415 555 0101,Bob', // international with punctuation
        '+15005558000,Test phone', // the test phone's numbers: possible, in no numbering plan
        '+15550001111,Test phone',
        '415 555 010,Short', // too short
        '+1 415 555 0100 1234567,Long', // too long
        '+999 123 456,Nowhere', // invalid country calling code
        'call me,Text', // not a number
        '4155550100,Ada again', // the first row's number again: a duplicate
      ].join('\n'),
    );
    expect(res.body).toEqual({
      added: 4,
      duplicates: 1,
      rejected: [
        { row: 5, field: 'to_number', message: 'too short' },
        { row: 6, field: 'to_number', message: 'too long' },
        { row: 7, field: 'to_number', message: 'invalid country calling code' },
        { row: 8, field: 'to_number', message: 'not a number' },
      ],
    });
    expect(await listed(id)).toEqual(['+14155550100', '+14155550101', '+15005558000', '+15550001111']);
  });

  it("without default_region national numbers are read in the caller ID's country: from_number's, else the default trunk's", async () => {
    const de = await h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody({ from_number: '+49 30 901820' })).expect(201);
    expect(de.body).toMatchObject({ from_number: DE_CALLER_ID, default_region: null });
    const r1 = await h.http.post(`/api/v1/campaigns/${de.body.id}/contacts`).set(admin()).send({ contacts: [{ to_number: '0151 12345678' }, { to_number: '030 1234' }] }).expect(200);
    expect(r1.body).toEqual({ added: 2, duplicates: 0, rejected: [] });
    expect(await listed(de.body.id)).toEqual(['+4915112345678', '+49301234']);

    const us = await h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody()).expect(201);
    const r2 = await csv(us.body.id, 'to_number\n(415) 555-0100\n0151 12345678\n');
    // 0151… is no US number: a leading 0 is no US area code, and it has too many digits.
    expect(r2.body.added).toBe(1);
    expect(r2.body.rejected).toEqual([{ row: 2, field: 'to_number', message: expect.stringMatching(/^(too long|invalid length|not a number)$/) }]);
    expect(await listed(us.body.id)).toEqual(['+14155550100']);
  });

  it('refuses an unknown default_region and a from_number that cannot exist, naming the field and the reason', async () => {
    const bad = await h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody({ default_region: 'usa' })).expect(422);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'default_region' }] });
    const short = await h.http.post('/api/v1/campaigns').set(admin()).send(campaignBody({ from_number: '+1555' })).expect(422);
    expect(short.body.error).toEqual({ code: 'validation_failed', message: 'from_number is not a phone number that can exist: too short', details: [{ field: 'from_number', message: 'too short' }] });
  });
});

describe('dial-out, trunks and do-not-call', () => {
  const dial = (body: Record<string, unknown>) => h.http.post('/api/v1/sip/dialout').set('X-API-Key', key).send({ bot_id: botId, ...body });

  it('a dial-out takes national numbers (default_region, else the caller ID country) and answers E.164', async () => {
    const a = await dial({ to_number: '(415) 555-0100' }).expect(201);
    expect(a.body).toMatchObject({ to_number: '+14155550100', from_number: '+15550002000' });
    const b = await dial({ to_number: '0151 12345678', from_number: '+49 30 901820' }).expect(201);
    expect(b.body).toMatchObject({ to_number: '+4915112345678', from_number: DE_CALLER_ID });
    const c = await dial({ to_number: '020 7946 0958', default_region: 'GB' }).expect(201);
    expect(c.body).toMatchObject({ to_number: '+442079460958', from_number: '+15550002000' });
    for (const n of ['+15005558000', '+15005556000', '+15005557001', '+15550001111']) expect((await dial({ to_number: n }).expect(201)).body.to_number).toBe(n);
    const stored = await h.http.get(`/api/v1/calls/${b.body.call_id}`).set('X-API-Key', key).expect(200);
    expect(stored.body).toMatchObject({ to_number: '+4915112345678', from_number: DE_CALLER_ID });
  });

  it('a dial-out number that cannot exist is 422 invalid_phone_number with the field and the reason', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ to_number: '+1555' }, 'to_number', 'too short'],
      [{ to_number: '+1 415 555 0100 1234567' }, 'to_number', 'too long'],
      [{ to_number: '+999 123 456' }, 'to_number', 'invalid country calling code'],
      [{ to_number: 'call me' }, 'to_number', 'not a number'],
      [{ to_number: '+14155550100', from_number: '555 000 2000' }, 'from_number', 'invalid country calling code'],
    ];
    for (const [body, field, reason] of cases) {
      const res = await dial(body);
      expect([body, res.status, res.body.error]).toEqual([body, 422, { code: 'invalid_phone_number', message: `${field} is not a phone number that can exist: ${reason}`, details: [{ field, message: reason }] }]);
    }
  });

  it('trunk numbers: normalised, each impossible one named, the same number twice refused', async () => {
    const res = await h.http
      .post('/api/v1/sip/outbound-trunks')
      .set(admin())
      .send({ name: 'x', address: 'sip.example.com', numbers: ['+1 (555) 000-3000', '+1234', '+15550003000', '(415) 555-0100'] })
      .expect(422);
    expect(res.body.error).toMatchObject({
      code: 'validation_failed',
      details: [
        { field: 'numbers.1', message: 'too short' },
        { field: 'numbers.2', message: 'is the same number as numbers.0 (+15550003000)' },
        { field: 'numbers.3', message: 'invalid country calling code' },
      ],
    });
  });

  it('do-not-call numbers are stored as E.164, looked up and removed in any international format', async () => {
    const add = await h.http.post('/api/v1/dnc').set(admin()).send({ numbers: ['+1 (415) 555-0199', '+14155550199'] }).expect(200);
    expect(add.body).toEqual({ added: 1, duplicates: 1 });
    const found = await h.http.get('/api/v1/dnc').query({ number: '+1 415-555-0199' }).set(admin()).expect(200);
    expect(found.body.items.map((i: { number: string }) => i.number)).toEqual(['+14155550199']);
    const bad = await h.http.post('/api/v1/dnc').set(admin()).send({ numbers: ['+14155550199', 'nope'] }).expect(422);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'numbers.1', message: 'not a number' }] });
    await h.http.delete(`/api/v1/dnc/${encodeURIComponent('+1 415 555 0199')}`).set(admin()).expect(204);
  });
});
