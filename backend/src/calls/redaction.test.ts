// Redaction (shared/DESIGN.md §16) on the backend's side, on real stores and HTTP receivers: a bot's
// redaction settings (defaults, an unknown entity a 422 naming it, bots stored before the setting), and a
// campaign call whose end brings a card number unmasked (4111 1111 1111 1111, a Luhn-valid test card: a
// worker that predates the bot's setting): what the backend stores, the call.ended webhook with its
// transcript, the post-call analysis and the campaign's CSV export carry only the mask.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ObjectId } from 'mongodb';
import { Redis } from 'ioredis';
import { startTestEnv, waitUntil, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { createLogger } from '../core/logger.js';
import { COLLECTIONS } from '../core/collections.js';
import { insertCall, queuedCall } from './store.js';
import { contacts, recordDial } from '../campaigns/store.js';
import { parseCsv } from '../campaigns/csv.js';

const CARD = '4111111111111111';
const worker = `Bearer ${WORKER_TOKEN}`;

let env: TestEnv;
let h: Harness;
let auth: string;
beforeAll(async () => {
  env = await startTestEnv(['redis']); // the outbox stream is global: a Redis of our own
  const r = new Redis(env.env.REDIS_URL!);
  await r.flushall();
  r.disconnect();
  h = await startHarness({ redisUrl: env.env.REDIS_URL, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  auth = await adminToken(h);
});
afterAll(async () => {
  await h?.close();
  await env?.stop();
});

const admin = () => ({ Authorization: auth });

describe('a bot\'s redaction and recording settings', () => {
  it('default to no redaction and recorded; are kept as written; reach the worker\'s config', async () => {
    const plain = await h.http.post('/api/v1/bots').set(admin()).send({ name: 'plain' }).expect(201);
    expect(plain.body).toMatchObject({ redaction: { entities: [], mode: 'mask', redact_llm: false }, recording: { enabled: true, redact_keypad_tones: false } });
    const res = await h.http.post('/api/v1/bots').set(admin()).send({ name: 'private', redaction: { entities: ['card_number', 'ssn'] }, recording: { redact_keypad_tones: true } }).expect(201);
    expect(res.body).toMatchObject({ redaction: { entities: ['card_number', 'ssn'], mode: 'mask', redact_llm: false }, recording: { enabled: true, redact_keypad_tones: true } });
    // PATCH merges like the other settings: entities replaced whole, the rest kept.
    const patched = await h.http.patch(`/api/v1/bots/${res.body.id}`).set(admin()).send({ redaction: { redact_llm: true }, recording: { enabled: false } }).expect(200);
    expect(patched.body).toMatchObject({ redaction: { entities: ['card_number', 'ssn'], redact_llm: true }, recording: { enabled: false, redact_keypad_tones: true } });
    const config = await h.http.get(`/api/v1/config?bot_id=${res.body.id}`).set('Authorization', worker).expect(200);
    expect(config.body.bot).toMatchObject({ redaction: { entities: ['card_number', 'ssn'], mode: 'mask', redact_llm: true }, recording: { enabled: false, redact_keypad_tones: true } });
  });

  it('an unknown entity is a 422 naming it, on POST and PATCH; one listed twice is kept once', async () => {
    const res = await h.http.post('/api/v1/bots').set(admin()).send({ name: 'x', redaction: { entities: ['card_number', 'passport', 'iban'] } }).expect(422);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toContain('passport');
    expect(res.body.error.message).toContain('iban');
    expect(res.body.error.details).toEqual([
      { field: 'redaction.entities.1', message: '"passport" is not a redaction entity (one of card_number, ssn, email, phone)' },
      { field: 'redaction.entities.2', message: '"iban" is not a redaction entity (one of card_number, ssn, email, phone)' },
    ]);
    const id = await createBot(h, auth, { name: 'y' });
    const patch = await h.http.patch(`/api/v1/bots/${id}`).set(admin()).send({ redaction: { entities: ['dob'] } }).expect(422);
    expect(patch.body.error.details).toEqual([{ field: 'redaction.entities.0', message: '"dob" is not a redaction entity (one of card_number, ssn, email, phone)' }]);
    await h.http.post('/api/v1/bots').set(admin()).send({ name: 'z', redaction: { mode: 'hash' } }).expect(422);
    // One listed twice is kept once.
    const twice = await h.http.post('/api/v1/bots').set(admin()).send({ name: 'w', redaction: { entities: ['ssn', 'email', 'ssn'] } }).expect(201);
    expect(twice.body.redaction.entities).toEqual(['ssn', 'email']);
  });

  it('a bot stored before the settings has none: no redaction, recorded', async () => {
    const id = await createBot(h, auth, { name: 'old' });
    await h.db.collection(COLLECTIONS.bots).updateOne({ _id: id as never }, { $unset: { redaction: '', recording: '' } });
    const res = await h.http.get(`/api/v1/bots/${id}`).set(admin()).expect(200);
    expect(res.body).toMatchObject({ redaction: { entities: [], mode: 'mask', redact_llm: false }, recording: { enabled: true, redact_keypad_tones: false } });
  });
});

describe('a campaign call whose end brings a card number unmasked', () => {
  it('is stored, sent to webhooks, analysed and exported with the mask only', async () => {
    // A webhook receiver with the transcript.
    const got: Array<{ type: string; raw: string; data: Record<string, unknown> }> = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        got.push({ raw, ...(JSON.parse(raw) as { type: string; data: Record<string, unknown> }) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const deliverer = h.deliverer();
    try {
      await h.http.post('/api/v1/webhooks').set(admin()).send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, events: ['call.ended', 'call.analyzed'], include_transcript: true }).expect(201);
      const botId = await createBot(h, auth, {
        name: 'card bot',
        redaction: { entities: ['card_number'] },
        analysis: { summary: true, fields: [], success: null },
        policy: { intents: [{ name: 'card', examples: [], dtmf: CARD, reply: 'Card noted.' }], fallback: { reply: 'Sorry?' } },
      });
      const campaign = await h.http
        .post('/api/v1/campaigns')
        .set(admin())
        .send({ name: 'Cards', bot_id: botId, timezone: 'Europe/Berlin', windows: [], max_concurrency: 1, calls_per_second: 1, retry: { max_attempts: 1, delay_seconds: 600, on: [] } })
        .expect(201);
      const campaignId = campaign.body.id as string;
      await h.http.post(`/api/v1/campaigns/${campaignId}/contacts`).set(admin()).send({ contacts: [{ to_number: '+4915112345678' }] }).expect(200);
      const contact = (await contacts(h.db).findOne({ campaign_id: campaignId }))!;

      // Dialled the dialler's way; then the worker's events, the end with the card as pressed and said back.
      const id = new ObjectId().toHexString();
      const at = (s: number) => new Date(h.clock.ms + s * 1000).toISOString();
      await recordDial({ db: h.db, redis: h.redis, logger: createLogger('silent'), clock: h.clock.now }, contact._id, id, 1, new Date(h.clock.ms));
      await insertCall(h.db, queuedCall({ _id: id, bot_id: botId, direction: 'outbound', to_number: contact.to_number, from_number: '+15550001000', variables: {}, api_key_id: null, campaign_id: campaignId, campaign_contact_id: contact._id, campaign_attempt: 1 }, new Date(h.clock.ms)));
      const event = (body: object) => h.http.post(`/api/v1/calls/${id}/events`).set('Authorization', worker).send(body).expect(200);
      await event({ status: 'in_progress', at: at(1) });
      await event({
        status: 'completed',
        end_reason: 'bot_hangup',
        at: at(9),
        transcript: [
          { role: 'user', text: CARD, dtmf: true, at: at(2) },
          { role: 'bot', text: `Card ${CARD} noted.`, at: at(3) },
          { role: 'user', text: 'my card is 4111 1111 1111 1111', at: at(5) },
        ],
        actions: [{ type: 'dtmf_in', name: 'keypad', at: at(2), duration_ms: 300, status: 'ok', arguments: { digits: CARD }, result: null, error: null }],
        turn_latencies_ms: [500],
        turns: [{ index: 1, user_text: CARD, user_end_at: at(2), decided_at: at(2), stt_ms: 0, llm_first_token_ms: 10, tts_first_audio_ms: 100, tool_ms: 0, latency_ms: 500, preemptive: false, interrupted: false }],
      });
      await event({ status: 'completed', recording_key: `recordings/${id}.wav` });

      const call = (await h.http.get(`/api/v1/calls/${id}`).set(admin()).expect(200)).body;
      expect(call.transcript.map((t: { text: string }) => t.text)).toEqual(['[card_number]', 'Card [card_number] noted.', 'my card is [card_number]']);
      expect(call.actions[0].arguments).toEqual({ digits: '[card_number]' });
      expect(call.turns[0].user_text).toBe('[card_number]');
      expect(JSON.stringify(call)).not.toContain(CARD);
      // Nothing of it in the database either.
      expect(JSON.stringify(await h.db.collection(COLLECTIONS.calls).findOne({ _id: id as never }))).not.toContain(CARD);

      // The analysis reads the stored transcript: its summary quotes the caller masked.
      await h.analysisRunner().runOnce();
      const analysed = (await h.http.get(`/api/v1/calls/${id}`).set(admin()).expect(200)).body.analysis;
      expect(analysed.status).toBe('done');
      expect(analysed.summary).toContain('[card_number]');
      expect(analysed.summary).not.toContain(CARD);

      // The webhooks: call.ended and call.analyzed, each with the transcript, masked.
      deliverer.start();
      await waitUntil(() => got.length === 2, { what: 'call.ended and call.analyzed', timeoutMs: 20_000 });
      expect(got.map((g) => g.type).sort()).toEqual(['call.analyzed', 'call.ended']);
      const ended = got.find((g) => g.type === 'call.ended')!;
      expect((ended.data.transcript as Array<{ text: string }>).map((t) => t.text)).toEqual(['[card_number]', 'Card [card_number] noted.', 'my card is [card_number]']);
      for (const g of got) expect(g.raw).not.toMatch(/4111[ -]?1111[ -]?1111[ -]?1111/);

      // The campaign's CSV export: the analysis summary column, masked.
      const csv = await h.http.get(`/api/v1/campaigns/${campaignId}/contacts.csv`).set(admin()).expect(200);
      const [header, row] = parseCsv(csv.text);
      expect(row![header!.indexOf('analysis_summary')]).toContain('[card_number]');
      expect(csv.text).not.toMatch(/4111[ -]?1111[ -]?1111[ -]?1111/);
      expect(h.logs.join('')).not.toContain(CARD);
    } finally {
      await deliverer.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});
