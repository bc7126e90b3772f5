// The OpenAPI paths of the knowledge bases, built by openapi.ts with its helpers.
import { Type } from '@sinclair/typebox';
import { KNOWLEDGE_MEDIA_TYPES, KnowledgeBase, KnowledgeBaseCreate, KnowledgeBaseUpdate, KnowledgeDocument, KnowledgePassage, MAX_KNOWLEDGE_DOCUMENT_BYTES } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'body' | 'idParam' | 'ADMIN' | 'BODY' | 'idSchema' | 'WORKER_TOKEN'>;

const noContent = { description: 'Done' };
const STORAGE = 'service_unavailable' as const;

export function knowledgePaths(h: Helpers): Record<string, object> {
  const binary = { type: 'string', format: 'binary', maxLength: MAX_KNOWLEDGE_DOCUMENT_BYTES };
  return {
    '/api/v1/knowledge-bases': {
      post: { operationId: 'createKnowledgeBase', summary: 'Create a knowledge base', security: [{ adminJwt: [] }], requestBody: h.body(KnowledgeBaseCreate), responses: { 201: h.ok('The base', KnowledgeBase), ...h.errors([...h.ADMIN, ...h.BODY]) } },
      get: { operationId: 'listKnowledgeBases', summary: 'List knowledge bases', security: [{ adminJwt: [] }], responses: { 200: h.ok('Bases, newest first', Type.Object({ items: Type.Array(KnowledgeBase) })), ...h.errors([...h.ADMIN]) } },
    },
    '/api/v1/knowledge-bases/{id}': {
      parameters: [h.idParam('Knowledge base id')],
      get: { operationId: 'getKnowledgeBase', summary: 'One knowledge base', security: [{ adminJwt: [] }], responses: { 200: h.ok('The base', KnowledgeBase), ...h.errors([...h.ADMIN, 'not_found']) } },
      patch: { operationId: 'updateKnowledgeBase', summary: 'Rename or describe a knowledge base', security: [{ adminJwt: [] }], requestBody: h.body(KnowledgeBaseUpdate), responses: { 200: h.ok('The base', KnowledgeBase), ...h.errors([...h.ADMIN, ...h.BODY, 'not_found']) } },
      delete: {
        operationId: 'deleteKnowledgeBase',
        summary: 'Delete a knowledge base, its documents, chunks and stored originals (409 while a bot names it)',
        security: [{ adminJwt: [] }],
        responses: { 204: noContent, ...h.errors([...h.ADMIN, 'not_found', 'conflict', STORAGE]) },
      },
    },
    '/api/v1/knowledge-bases/{id}/documents': {
      parameters: [h.idParam('Knowledge base id')],
      get: { operationId: 'listKnowledgeDocuments', summary: "The base's documents with their chunk counts", security: [{ adminJwt: [] }], responses: { 200: h.ok('Documents, newest first', Type.Object({ items: Type.Array(KnowledgeDocument) })), ...h.errors([...h.ADMIN, 'not_found']) } },
      post: {
        operationId: 'uploadKnowledgeDocument',
        summary: 'Upload a document (text, Markdown, HTML or PDF, at most 10 MB)',
        description:
          'The file as the raw body (its `Content-Type`, its name in `X-Filename`) or as the `file` field of a multipart form. ' +
          'Over 10 MB: 413; another type: 415; content that is not what its type says (a "PDF" that is not one, text not in UTF-8): 422. ' +
          'Stored whole or not at all: the original in object storage, its chunks in MongoDB.',
        security: [{ adminJwt: [] }],
        parameters: [{ name: 'X-Filename', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'the file name (raw bodies; required there)' }],
        requestBody: {
          required: true,
          content: {
            ...Object.fromEntries(KNOWLEDGE_MEDIA_TYPES.map((t) => [t, { schema: binary }])),
            'multipart/form-data': { schema: { type: 'object', properties: { file: binary }, required: ['file'] } },
          },
        },
        responses: { 201: h.ok('The document', KnowledgeDocument), ...h.errors([...h.ADMIN, 'not_found', 'payload_too_large', 'unsupported_media_type', 'validation_failed', 'request_timeout', STORAGE]) },
      },
    },
    '/api/v1/knowledge-bases/{id}/documents/{documentId}': {
      parameters: [h.idParam('Knowledge base id'), { name: 'documentId', in: 'path', required: true, schema: h.idSchema }],
      delete: { operationId: 'deleteKnowledgeDocument', summary: 'Delete a document: its chunks and its stored original', security: [{ adminJwt: [] }], responses: { 204: noContent, ...h.errors([...h.ADMIN, 'not_found', STORAGE]) } },
    },
    '/api/v1/config/knowledge': {
      get: {
        operationId: 'retrieveKnowledge',
        summary: "Worker: the best passages of a bot's knowledge bases for the caller's words (BM25)",
        security: [{ workerToken: [] }],
        parameters: [
          { name: 'bot_id', in: 'query', required: true, schema: h.idSchema },
          { name: 'q', in: 'query', required: true, schema: { type: 'string', maxLength: 2000 } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 5, default: 3 } },
        ],
        responses: { 200: h.ok('Passages, best first', Type.Object({ passages: Type.Array(KnowledgePassage) })), ...h.errors(['unauthorized', 'bot_not_found', 'validation_failed'], h.WORKER_TOKEN) },
      },
    },
  };
}
