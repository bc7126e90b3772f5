// Knowledge bases (shared/DESIGN.md §18) on a real object store (this file's own MinIO) and FerretDB: CRUD and
// who may call it, documents uploaded raw or as a multipart form (text, Markdown, HTML, a real PDF), split into
// chunks in MongoDB with the original in object storage; refusals (413 over 10 MB, 415 another type, 422 a
// "PDF" that is not one / text not UTF-8 / no file name) storing nothing; the worker's retrieval answering the
// best passage, on every replica, updated by a document's upload and deletion; deletion removing chunks and object.
import { Client } from 'minio';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { adminToken, createBot, startHarness, WORKER_TOKEN, type Harness } from '../../testing/harness.js';
import { userOfRole } from '../../testing/users.js';
import { pdfOf } from '../../testing/pdf.js';

const BUCKET = 'recordings';
let env: TestEnv;
let h: Harness;
let auth: string;
let s3: Client;

beforeAll(async () => {
  env = await startTestEnv(['minio']);
  const storage = env.services.minio!.env;
  h = await startHarness({ env: { STORAGE_ENDPOINT: storage.STORAGE_ENDPOINT!, STORAGE_ACCESS_KEY: storage.STORAGE_ACCESS_KEY!, STORAGE_SECRET_KEY: storage.STORAGE_SECRET_KEY!, STORAGE_BUCKET: BUCKET } });
  auth = await adminToken(h);
  const [host, port] = storage.STORAGE_ENDPOINT!.split(':');
  s3 = new Client({ endPoint: host!, port: Number(port), useSSL: false, accessKey: storage.STORAGE_ACCESS_KEY!, secretKey: storage.STORAGE_SECRET_KEY! });
  await s3.makeBucket(BUCKET);
});
afterAll(async () => {
  await h?.close();
  await env?.stop();
});

const REFUND = 'Refunds are paid within fourteen days of the return reaching our warehouse.';
const HOURS = 'Our support line is open from nine to five on weekdays.';

async function newBase(name = 'Help centre'): Promise<string> {
  return (await h.http.post('/api/v1/knowledge-bases').set('Authorization', auth).send({ name }).expect(201)).body.id as string;
}
const uploadRaw = (kb: string, body: Buffer | string, type: string, filename = 'doc.txt') =>
  h.http.post(`/api/v1/knowledge-bases/${kb}/documents`).set('Authorization', auth).set('Content-Type', type).set('X-Filename', filename).send(Buffer.isBuffer(body) ? body : Buffer.from(body));
const retrieve = (http: Harness['http'], botId: string, q: string) => http.get('/api/v1/config/knowledge').query({ bot_id: botId, q }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(200);
const objects = async (prefix: string) => {
  const names: string[] = [];
  for await (const o of s3.listObjectsV2(BUCKET, prefix, true)) names.push((o as { name: string }).name);
  return names;
};
const stored = async (kb: string) => ({
  docs: await h.db.collection('knowledge_documents').countDocuments({ knowledge_base_id: kb }),
  chunks: await h.db.collection('knowledge_chunks').countDocuments({ knowledge_base_id: kb }),
  objects: (await objects(`knowledge/${kb}/`)).length,
});

describe('knowledge bases', () => {
  it('CRUD for editors, read-only for viewers', async () => {
    const viewer = await userOfRole(h, auth, 'viewer');
    const editor = await userOfRole(h, auth, 'editor');
    const created = await h.http.post('/api/v1/knowledge-bases').set('Authorization', editor.auth).send({ name: 'Policies', description: 'returns' }).expect(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[a-f0-9]{24}$/), name: 'Policies', description: 'returns', document_count: 0, chunk_count: 0, created_at: expect.any(String), updated_at: expect.any(String) });
    expect((await h.http.post('/api/v1/knowledge-bases').set('Authorization', viewer.auth).send({ name: 'x' }).expect(403)).body.error.code).toBe('forbidden');
    const list = await h.http.get('/api/v1/knowledge-bases').set('Authorization', viewer.auth).expect(200);
    expect(list.body.items.map((b: { id: string }) => b.id)).toContain(created.body.id);
    const renamed = await h.http.patch(`/api/v1/knowledge-bases/${created.body.id}`).set('Authorization', editor.auth).send({ name: 'Return policies' }).expect(200);
    expect(renamed.body.name).toBe('Return policies');
    const bad = await h.http.post('/api/v1/knowledge-bases').set('Authorization', auth).send({ name: '', extra: 1 }).expect(422);
    expect(bad.body.error.code).toBe('validation_failed');
    await h.http.delete(`/api/v1/knowledge-bases/${created.body.id}`).set('Authorization', viewer.auth).expect(403);
    await h.http.delete(`/api/v1/knowledge-bases/${created.body.id}`).set('Authorization', editor.auth).expect(204);
    await h.http.get(`/api/v1/knowledge-bases/${created.body.id}`).set('Authorization', auth).expect(404);
  });

  it('takes text, Markdown, HTML (multipart) and PDF: originals in object storage, chunks in MongoDB, counts shown', async () => {
    const kb = await newBase();
    const text = await uploadRaw(kb, `${REFUND}\n\n${HOURS}`, 'text/plain; charset=utf-8', 'faq.txt').expect(201);
    expect(text.body).toEqual({ id: expect.any(String), knowledge_base_id: kb, filename: 'faq.txt', content_type: 'text/plain', size_bytes: Buffer.byteLength(`${REFUND}\n\n${HOURS}`), chunk_count: 1, created_at: expect.any(String) });
    await uploadRaw(kb, '# Shipping\n\nParcels ship **the same day** when ordered before noon.', 'text/markdown', 'shipping.md').expect(201);
    const html = await h.http
      .post(`/api/v1/knowledge-bases/${kb}/documents`)
      .set('Authorization', auth)
      .attach('file', Buffer.from('<html><head><style>p{}</style><script>var secret=1</script></head><body><p>Gift cards never expire &amp; can be used online.</p></body></html>'), { filename: 'gifts.html', contentType: 'text/html' })
      .expect(201);
    expect(html.body).toMatchObject({ filename: 'gifts.html', content_type: 'text/html', chunk_count: 1 });
    const pdf = await uploadRaw(kb, pdfOf(['Warranty claims need the original receipt.', 'Claims are answered within three days.']), 'application/pdf', 'warranty.pdf').expect(201);
    expect(pdf.body).toMatchObject({ content_type: 'application/pdf', chunk_count: 1 });

    expect(await stored(kb)).toEqual({ docs: 4, chunks: 4, objects: 4 });
    const chunks = await h.db.collection('knowledge_chunks').find({ knowledge_base_id: kb }).toArray();
    expect(chunks.map((c) => c.text).sort()).toEqual([
      'Gift cards never expire & can be used online.',
      `${REFUND} ${HOURS}`,
      'Shipping Parcels ship the same day when ordered before noon.',
      'Warranty claims need the original receipt. Claims are answered within three days.',
    ]);
    const docs = await h.http.get(`/api/v1/knowledge-bases/${kb}/documents`).set('Authorization', auth).expect(200);
    expect(docs.body.items.map((d: { filename: string; chunk_count: number }) => [d.filename, d.chunk_count])).toEqual([['warranty.pdf', 1], ['gifts.html', 1], ['shipping.md', 1], ['faq.txt', 1]]);
    expect((await h.http.get(`/api/v1/knowledge-bases/${kb}`).set('Authorization', auth).expect(200)).body).toMatchObject({ document_count: 4, chunk_count: 4 });
    // The original, byte for byte.
    const original = await s3.getObject(BUCKET, `knowledge/${kb}/${pdf.body.id}`);
    const bytes: Buffer[] = [];
    for await (const c of original) bytes.push(c as Buffer);
    expect(Buffer.concat(bytes).equals(pdfOf(['Warranty claims need the original receipt.', 'Claims are answered within three days.']))).toBe(true);
  });

  it('refuses over 10 MB (413), other types (415), content not of its type and missing names (422), storing nothing', async () => {
    const kb = await newBase();
    await uploadRaw(kb, 'kept', 'text/plain').expect(201);
    const before = await stored(kb);
    const big = await uploadRaw(kb, Buffer.alloc(10 * 1024 * 1024 + 1, 0x61), 'text/plain');
    expect([big.status, big.body.error?.code]).toEqual([413, 'payload_too_large']);
    expect((await uploadRaw(kb, 'x', 'image/png').expect(415)).body.error.code).toBe('unsupported_media_type');
    expect((await uploadRaw(kb, 'x', 'text/plain; charset=latin1').expect(415)).body.error.code).toBe('unsupported_media_type');
    const fake = await uploadRaw(kb, 'this is not a pdf', 'application/pdf', 'fake.pdf').expect(422);
    expect(fake.body.error).toEqual({ code: 'validation_failed', message: 'the document is invalid', details: [{ field: 'file', message: 'is not a PDF (no %PDF- header)' }] });
    const broken = await uploadRaw(kb, Buffer.from('%PDF-1.4\ngarbage with no objects'), 'application/pdf', 'broken.pdf').expect(422);
    expect(broken.body.error.details).toEqual([{ field: 'file', message: 'is not a readable PDF' }]);
    expect((await uploadRaw(kb, Buffer.from([0xff, 0xfe, 0x00, 0x41]), 'text/plain').expect(422)).body.error.details[0].field).toBe('file');
    const unnamed = await h.http.post(`/api/v1/knowledge-bases/${kb}/documents`).set('Authorization', auth).set('Content-Type', 'text/plain').send('hello').expect(422);
    expect(unnamed.body.error.details).toEqual([{ field: 'X-Filename', message: expect.stringContaining('file name') }]);
    const noFile = await h.http.post(`/api/v1/knowledge-bases/${kb}/documents`).set('Authorization', auth).field('other', 'x').expect(422);
    expect(noFile.body.error.details[0].field).toBe('file');
    expect(await stored(kb)).toEqual(before);
    await uploadRaw('0123456789abcdef01234567', 'x', 'text/plain').expect(404);
  });

  it('retrieval answers the best passage on every replica, follows uploads and deletions; deleting removes chunks and object', async () => {
    const kb = await newBase();
    const botId = await createBot(h, auth, { name: 'helpdesk', knowledge_base_ids: [kb] });
    const replica = h.replica();
    expect((await retrieve(h.http, botId, 'when are refunds paid')).body).toEqual({ passages: [] });
    const doc = await uploadRaw(kb, `${REFUND}\n\n${'Filler sentence about nothing in particular. '.repeat(20)}\n\n${HOURS}`, 'text/plain', 'faq.txt').expect(201);
    expect(doc.body.chunk_count).toBeGreaterThan(1);
    for (const http of [h.http, replica.http]) {
      const res = await retrieve(http, botId, 'when are refunds paid');
      expect(res.body.passages[0]).toEqual({ text: expect.stringContaining(REFUND), document: 'faq.txt', knowledge_base_id: kb, score: expect.any(Number) });
      expect((await retrieve(http, botId, 'what hours is support open')).body.passages[0].text).toContain(HOURS);
    }
    await h.http.delete(`/api/v1/knowledge-bases/${kb}/documents/${doc.body.id}`).set('Authorization', auth).expect(204);
    expect(await stored(kb)).toEqual({ docs: 0, chunks: 0, objects: 0 });
    for (const http of [h.http, replica.http]) expect((await retrieve(http, botId, 'when are refunds paid')).body).toEqual({ passages: [] });
    // A base a bot names is not deleted; a bot cannot name a base that does not exist.
    expect((await h.http.delete(`/api/v1/knowledge-bases/${kb}`).set('Authorization', auth).expect(409)).body.error.code).toBe('conflict');
    const bad = await h.http.post('/api/v1/bots').set('Authorization', auth).send({ name: 'x', knowledge_base_ids: ['0123456789abcdef01234567'] }).expect(422);
    expect(bad.body.error.details).toEqual([{ field: 'knowledge_base_ids.0', message: '0123456789abcdef01234567 is not a knowledge base' }]);
    expect((await h.http.get('/api/v1/config/knowledge').query({ bot_id: botId }).set('Authorization', `Bearer ${WORKER_TOKEN}`).expect(422)).body.error.details[0].field).toBe('q');
    await h.http.get('/api/v1/config/knowledge').query({ bot_id: botId, q: 'x' }).expect(401);
  });
});
