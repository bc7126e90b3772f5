// Knowledge retrieval with an OpenAI-compatible embeddings model (KNOWLEDGE_EMBEDDINGS_MODEL) against the
// embeddings stand-in (tests/infra, OpenAI's protocol): chunks are stored with vectors, a query sharing no word
// with a passage finds it by similarity (blended with BM25), an embeddings API that fails at upload stores
// nothing (503 naming embeddings), and one that fails at query time leaves BM25 answering.
import { startTestEnv, startEmbeddingsStandIn, type EmbeddingsStandIn, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';

let env: TestEnv;
let h: Harness;
let auth: string;
let api: EmbeddingsStandIn;

beforeAll(async () => {
  env = await startTestEnv(['minio']);
  api = await startEmbeddingsStandIn();
  const storage = env.services.minio!.env;
  h = await startHarness({
    env: {
      STORAGE_ENDPOINT: storage.STORAGE_ENDPOINT!,
      STORAGE_ACCESS_KEY: storage.STORAGE_ACCESS_KEY!,
      STORAGE_SECRET_KEY: storage.STORAGE_SECRET_KEY!,
      STORAGE_BUCKET: 'knowledge-embeddings',
      KNOWLEDGE_EMBEDDINGS_MODEL: 'text-embedding-3-small',
      OPENAI_BASE_URL: api.url,
      OPENAI_API_KEY: 'sk-embeddings-test-0123',
    },
  });
  auth = await adminToken(h);
});
afterAll(async () => {
  await h?.close();
  await api?.close();
  await env?.stop();
});

const REFUND = 'Refunds are paid within fourteen days.';
const HOURS = 'Support answers the phone from nine to five.';
const upload = (kb: string, text: string, filename: string) =>
  h.http.post(`/api/v1/knowledge-bases/${kb}/documents`).set('Authorization', auth).set('Content-Type', 'text/plain').set('X-Filename', filename).send(Buffer.from(text));
const retrieve = (botId: string, q: string) => h.http.get('/api/v1/config/knowledge').query({ bot_id: botId, q }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);

it('stores vectors, finds a passage by meaning when no word matches, and blends with BM25', async () => {
  const kb = (await h.http.post('/api/v1/knowledge-bases').set('Authorization', auth).send({ name: 'Semantic' }).expect(201)).body.id as string;
  api.requests.length = 0;
  await upload(kb, REFUND, 'refunds.txt').expect(201);
  await upload(kb, HOURS, 'hours.txt').expect(201);
  expect(api.requests.map((r) => [r.authorization, r.body])).toEqual([
    ['Bearer sk-embeddings-test-0123', { model: 'text-embedding-3-small', input: [REFUND], encoding_format: 'float' }],
    ['Bearer sk-embeddings-test-0123', { model: 'text-embedding-3-small', input: [HOURS], encoding_format: 'float' }],
  ]);
  const chunk = await h.db.collection('knowledge_chunks').findOne({ knowledge_base_id: kb, filename: 'refunds.txt' });
  expect(chunk?.vector).toHaveLength(64);
  const botId = await createBot(h, auth, { name: 'semantic', knowledge_base_ids: [kb] });
  // "money back" shares no word with the refund passage: BM25 alone finds nothing, the vectors find it.
  const res = await retrieve(botId, 'can I get my money back');
  expect(res.body.passages[0]).toEqual({ text: REFUND, document: 'refunds.txt', knowledge_base_id: kb, score: expect.any(Number) });
  expect((await retrieve(botId, 'when does support answer the phone')).body.passages[0].text).toBe(HOURS);
  // The query's vector went through the same API.
  expect(api.requests.at(-1)?.body).toEqual({ model: 'text-embedding-3-small', input: ['when does support answer the phone'], encoding_format: 'float' });

  // At query time a failing API leaves BM25 answering (the word query still finds its passage).
  api.failing = true;
  try {
    expect((await retrieve(botId, 'when does support answer the phone')).body.passages[0].text).toBe(HOURS);
    expect((await retrieve(botId, 'can I get my money back')).body.passages).toEqual([]);
    // At upload it stores nothing: 503 naming embeddings.
    const before = await h.db.collection('knowledge_chunks').countDocuments({ knowledge_base_id: kb });
    const refused = await upload(kb, 'Gift cards never expire.', 'gifts.txt').expect(503);
    expect(refused.body.error).toMatchObject({ code: 'service_unavailable', details: { failed: ['embeddings'] } });
    expect(JSON.stringify(refused.body)).not.toContain('sk-embeddings-test');
    expect(await h.db.collection('knowledge_chunks').countDocuments({ knowledge_base_id: kb })).toBe(before);
    expect(await h.db.collection('knowledge_documents').countDocuments({ knowledge_base_id: kb })).toBe(2);
  } finally {
    api.failing = false;
  }
});
