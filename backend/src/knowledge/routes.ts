// Knowledge bases (shared/DESIGN.md §18): CRUD (editors write, viewers read: auth/permissions.ts), documents
// uploaded as the raw body (its Content-Type, its name in X-Filename) or the `file` field of a multipart form,
// at most 10 MB, text / Markdown / HTML / PDF. A document is stored whole or not at all: its original in object
// storage, its chunks in MongoDB, then its record and the base's version (what each replica's index checks);
// a failure on the way takes back what was written. The worker's retrieval: GET /api/v1/config/knowledge.
import { ObjectId } from 'mongodb';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { KNOWLEDGE_MEDIA_TYPES, KnowledgeBaseCreate, KnowledgeBaseUpdate, MAX_KNOWLEDGE_DOCUMENT_BYTES, RESOURCE_ID_PATTERN, type KnowledgeMediaType } from '@voice-platform/schemas';
import { apiError, ApiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { check } from '../core/validate.js';
import { jsonBody, readRaw } from '../core/body.js';
import { COLLECTIONS } from '../core/collections.js';
import { StorageUnavailableError, type RecordingStore } from '../core/storage.js';
import { requireAdmin } from '../auth/admin.js';
import { requireWorker } from '../auth/worker.js';
import { cachedBot } from '../bots/store.js';
import { requestView } from '../core/cacheTable.js';
import { chunkText, documentText, KnowledgeContentError } from './extract.js';
import { KnowledgeIndex } from './index.js';
import { embed, EmbeddingsError, embeddingsOn } from './embeddings.js';
import { knowledgeBases, knowledgeChunks, knowledgeDocuments, publicKnowledgeBase, publicKnowledgeDocument, type KnowledgeChunkDoc, type KnowledgeDocumentDoc } from './store.js';

const ID = new RegExp(RESOURCE_ID_PATTERN);
/** A multipart form's own bytes besides the file (boundaries, part headers). */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** A turn's query vector may take this long (then the turn's passages come from BM25 alone). */
const QUERY_EMBED_TIMEOUT_MS = 600;
/** Passages a turn gets at most. */
const MAX_PASSAGES = 5;
const TOO_LARGE = `a document is at most ${MAX_KNOWLEDGE_DOCUMENT_BYTES} bytes (10 MB)`;

const storageDown = (err: StorageUnavailableError): ApiError =>
  apiError('service_unavailable', { message: `storage is unavailable; retry later (${err.message})`, details: { failed: ['storage'] }, headers: { 'Retry-After': '5' } });

const invalid = (field: string, message: string) => apiError('validation_failed', { message: 'the document is invalid', details: [{ field, message }] });

/** The media type of a Content-Type, if it is one a document may have (text in UTF-8 only). */
function mediaType(header: string | undefined | null): KnowledgeMediaType | null {
  const [type, ...params] = (header ?? '').split(';').map((p) => p.trim().toLowerCase());
  const charset = params.find((p) => p.startsWith('charset='))?.slice(8).replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') return null;
  return (KNOWLEDGE_MEDIA_TYPES as readonly string[]).includes(type ?? '') ? (type as KnowledgeMediaType) : null;
}

/** A file name as given: 1–255 characters, no control characters, no path. */
function fileName(raw: string | undefined, field: string): string {
  const name = (raw ?? '').trim();
  if (!name || name.length > 255 || /[\u0000-\u001f\u007f/\\]/.test(name)) throw invalid(field, 'needs a file name of 1-255 characters without control characters or slashes');
  return name;
}

/** The upload: the file's bytes, media type and name, from a raw body or a multipart form's `file` field. */
async function upload(ctx: Context): Promise<{ body: Buffer; type: KnowledgeMediaType; filename: string }> {
  const contentType = ctx.get('Content-Type');
  if (/^multipart\/form-data\s*;/i.test(contentType)) {
    const raw = await readRaw(ctx, MAX_KNOWLEDGE_DOCUMENT_BYTES + FORM_OVERHEAD_BYTES, TOO_LARGE);
    let file: File | string | null;
    try {
      file = (await new Request('http://upload.invalid/', { method: 'POST', headers: { 'Content-Type': contentType }, body: new Uint8Array(raw) }).formData()).get('file');
    } catch {
      throw invalid('file', 'is not a readable multipart form');
    }
    if (!file || typeof file === 'string') throw invalid('file', 'is missing: send the document as the form field `file`');
    if (file.size > MAX_KNOWLEDGE_DOCUMENT_BYTES) throw apiError('payload_too_large', TOO_LARGE);
    const type = mediaType(file.type);
    if (!type) throw apiError('unsupported_media_type', `a document is one of ${KNOWLEDGE_MEDIA_TYPES.join(', ')} (text in UTF-8)`);
    return { body: Buffer.from(await file.arrayBuffer()), type, filename: fileName(file.name, 'file') };
  }
  const type = mediaType(contentType);
  if (!type) throw apiError('unsupported_media_type', `a document is one of ${KNOWLEDGE_MEDIA_TYPES.join(', ')} (text in UTF-8), or a multipart form with its file as \`file\``);
  const filename = fileName(ctx.get('X-Filename') || undefined, 'X-Filename');
  return { body: await readRaw(ctx, MAX_KNOWLEDGE_DOCUMENT_BYTES, TOO_LARGE), type, filename };
}

export function knowledgeRoutes(router: Router, svc: Services): void {
  const admin = requireAdmin(svc);
  const index = new KnowledgeIndex(svc.db);
  const base = async (id: string) => {
    const doc = ID.test(id) ? await knowledgeBases(svc.db).findOne({ _id: id }) : null;
    if (!doc) throw apiError('not_found', 'knowledge base not found');
    return doc;
  };
  const storage = (): RecordingStore => {
    if (!svc.recordings) throw apiError('service_unavailable', { message: 'object storage is not configured (STORAGE_*)', details: { failed: ['storage'] }, headers: { 'Retry-After': '5' } });
    return svc.recordings;
  };

  router.post('/api/v1/knowledge-bases', admin, jsonBody(), async (ctx) => {
    const body = check(KnowledgeBaseCreate, ctx.request.body);
    const now = svc.now();
    const doc = { _id: new ObjectId().toHexString(), name: body.name, description: body.description ?? '', version: 0, document_count: 0, chunk_count: 0, created_at: now, updated_at: now };
    await knowledgeBases(svc.db).insertOne(doc);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/knowledge-bases/${doc._id}`);
    ctx.body = publicKnowledgeBase(doc);
  });

  router.get('/api/v1/knowledge-bases', admin, async (ctx) => {
    const docs = await knowledgeBases(svc.db).find({}).sort({ created_at: -1, _id: -1 }).limit(1000).toArray();
    ctx.body = { items: docs.map(publicKnowledgeBase) };
  });

  router.get('/api/v1/knowledge-bases/:id', admin, async (ctx) => {
    ctx.body = publicKnowledgeBase(await base(ctx.params.id!));
  });

  router.patch('/api/v1/knowledge-bases/:id', admin, jsonBody(), async (ctx) => {
    const patch = check(KnowledgeBaseUpdate, ctx.request.body);
    await base(ctx.params.id!);
    const doc = await knowledgeBases(svc.db).findOneAndUpdate({ _id: ctx.params.id! }, { $set: { ...patch, updated_at: svc.now() } }, { returnDocument: 'after' });
    if (!doc) throw apiError('not_found', 'knowledge base not found');
    ctx.body = publicKnowledgeBase(doc);
  });

  // A base a bot still names is not deleted (its calls would lose their knowledge silently).
  router.delete('/api/v1/knowledge-bases/:id', admin, async (ctx) => {
    const kb = await base(ctx.params.id!);
    const users = await svc.db.collection<{ _id: string; name: string }>(COLLECTIONS.bots).find({ knowledge_base_ids: kb._id }, { projection: { _id: 1, name: 1 } }).limit(20).toArray();
    if (users.length) throw apiError('conflict', { message: `bots use this knowledge base: ${users.map((b) => b.name).join(', ')}`, details: users.map((b) => ({ field: 'knowledge_base_ids', message: `bot ${b._id}` })) });
    const docs = await knowledgeDocuments(svc.db).find({ knowledge_base_id: kb._id }).toArray();
    if (docs.length) {
      const store = storage();
      try {
        for (const d of docs) await store.remove(d.object_key);
      } catch (err) {
        if (err instanceof StorageUnavailableError) throw storageDown(err);
        throw err;
      }
    }
    await knowledgeChunks(svc.db).deleteMany({ knowledge_base_id: kb._id });
    await knowledgeDocuments(svc.db).deleteMany({ knowledge_base_id: kb._id });
    await knowledgeBases(svc.db).deleteOne({ _id: kb._id });
    ctx.status = 204;
  });

  router.get('/api/v1/knowledge-bases/:id/documents', admin, async (ctx) => {
    const kb = await base(ctx.params.id!);
    const docs = await knowledgeDocuments(svc.db).find({ knowledge_base_id: kb._id }).sort({ created_at: -1, _id: -1 }).limit(1000).toArray();
    ctx.body = { items: docs.map(publicKnowledgeDocument) };
  });

  router.post('/api/v1/knowledge-bases/:id/documents', admin, async (ctx) => {
    const kb = await base(ctx.params.id!);
    const store = storage();
    const { body, type, filename } = await upload(ctx);
    let text: string;
    try {
      text = await documentText(body, type);
    } catch (err) {
      if (err instanceof KnowledgeContentError) throw invalid('file', err.message);
      throw err;
    }
    const chunks = chunkText(text);
    if (!chunks.length) throw invalid('file', 'has no text');
    // Vectors before anything is written: an embeddings API that fails stores nothing (503 naming it).
    let vectors: number[][] | null = null;
    if (embeddingsOn(svc.settings)) {
      try {
        vectors = await embed(chunks, svc.settings);
      } catch (err) {
        if (err instanceof EmbeddingsError) throw apiError('service_unavailable', { message: `the embeddings model is unavailable; retry later (${err.message})`, details: { failed: ['embeddings'] }, headers: { 'Retry-After': '5' } });
        throw err;
      }
    }
    const now = svc.now();
    const id = new ObjectId().toHexString();
    const doc: KnowledgeDocumentDoc = { _id: id, knowledge_base_id: kb._id, filename, content_type: type, size_bytes: body.length, chunk_count: chunks.length, object_key: `knowledge/${kb._id}/${id}`, created_at: now };
    const chunkDocs: KnowledgeChunkDoc[] = chunks.map((t, seq) => ({ _id: `${id}:${seq}`, knowledge_base_id: kb._id, document_id: id, filename, seq, text: t, ...(vectors ? { vector: vectors[seq]! } : {}) }));
    try {
      await store.put(doc.object_key, body, type);
    } catch (err) {
      if (err instanceof StorageUnavailableError) throw storageDown(err);
      throw err;
    }
    try {
      for (let i = 0; i < chunkDocs.length; i += 1000) await knowledgeChunks(svc.db).insertMany(chunkDocs.slice(i, i + 1000), { ordered: false });
      await knowledgeDocuments(svc.db).insertOne(doc);
      const moved = await knowledgeBases(svc.db).updateOne({ _id: kb._id }, { $inc: { version: 1, document_count: 1, chunk_count: chunks.length }, $set: { updated_at: now } });
      if (moved.matchedCount === 0) throw apiError('not_found', 'knowledge base not found');
    } catch (err) {
      // Both or neither: what was written goes again.
      await knowledgeDocuments(svc.db).deleteOne({ _id: id }).catch(() => undefined);
      await knowledgeChunks(svc.db).deleteMany({ document_id: id }).catch(() => undefined);
      await store.remove(doc.object_key).catch(() => undefined);
      throw err;
    }
    ctx.status = 201;
    ctx.set('Location', `/api/v1/knowledge-bases/${kb._id}/documents/${id}`);
    ctx.body = publicKnowledgeDocument(doc);
  });

  router.delete('/api/v1/knowledge-bases/:id/documents/:documentId', admin, async (ctx) => {
    const kb = await base(ctx.params.id!);
    const doc = await knowledgeDocuments(svc.db).findOne({ _id: ctx.params.documentId!, knowledge_base_id: kb._id });
    if (!doc) throw apiError('not_found', 'document not found');
    try {
      await storage().remove(doc.object_key);
    } catch (err) {
      if (err instanceof StorageUnavailableError) throw storageDown(err);
      throw err;
    }
    await knowledgeChunks(svc.db).deleteMany({ document_id: doc._id });
    const gone = await knowledgeDocuments(svc.db).deleteOne({ _id: doc._id });
    if (gone.deletedCount) await knowledgeBases(svc.db).updateOne({ _id: kb._id }, { $inc: { version: 1, document_count: -1, chunk_count: -doc.chunk_count }, $set: { updated_at: svc.now() } });
    ctx.status = 204;
  });

  // The worker, each turn of a bot with knowledge bases: the best passages for the caller's words.
  router.get('/api/v1/config/knowledge', requireWorker(svc), async (ctx) => {
    const botId = ctx.query.bot_id;
    const q = ctx.query.q;
    const limitRaw = ctx.query.limit;
    const limit = limitRaw === undefined ? 3 : Number(limitRaw);
    const problems = [];
    if (typeof botId !== 'string' || !ID.test(botId)) problems.push({ field: 'bot_id', message: 'is required (one bot id)' });
    if (typeof q !== 'string' || q.length > 2000) problems.push({ field: 'q', message: 'is required: the words to search for (at most 2000 characters)' });
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PASSAGES) problems.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_PASSAGES}` });
    if (problems.length) throw apiError('validation_failed', { details: problems });
    const bot = await cachedBot(svc, await requestView(svc.cache, ctx.state), botId as string);
    if (!bot) throw apiError('bot_not_found');
    ctx.set('Cache-Control', 'no-store');
    // The query's vector within a turn's budget (the worker waits 1 s at most); without it, BM25 alone.
    let queryVector: number[] | null = null;
    if (embeddingsOn(svc.settings) && bot.knowledge_base_ids.length && (q as string).trim()) {
      queryVector = await embed([q as string], svc.settings, Math.min(QUERY_EMBED_TIMEOUT_MS, svc.settings.KNOWLEDGE_EMBEDDINGS_TIMEOUT_MS)).then((v) => v[0]!, () => null);
    }
    ctx.body = { passages: await index.retrieve(bot.knowledge_base_ids, q as string, limit, queryVector) };
  });
}
