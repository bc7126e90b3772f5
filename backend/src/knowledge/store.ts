// Knowledge bases as stored: the base (its `version` moved by every document change: index.ts rebuilds on it),
// its documents (the original in object storage under `object_key`), and their chunks.
import type { Db } from 'mongodb';
import type { KnowledgeBase, KnowledgeDocument, KnowledgeMediaType } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';

export interface KnowledgeBaseDoc {
  _id: string;
  name: string;
  description: string;
  version: number;
  document_count: number;
  chunk_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface KnowledgeDocumentDoc {
  _id: string;
  knowledge_base_id: string;
  filename: string;
  content_type: KnowledgeMediaType;
  size_bytes: number;
  chunk_count: number;
  object_key: string;
  created_at: Date;
}

export interface KnowledgeChunkDoc {
  _id: string;
  knowledge_base_id: string;
  document_id: string;
  filename: string;
  seq: number;
  text: string;
  /** Its unit vector, when embeddings were on at upload. */
  vector?: number[];
}

export const knowledgeBases = (db: Db) => db.collection<KnowledgeBaseDoc>(COLLECTIONS.knowledgeBases);
export const knowledgeDocuments = (db: Db) => db.collection<KnowledgeDocumentDoc>(COLLECTIONS.knowledgeDocuments);
export const knowledgeChunks = (db: Db) => db.collection<KnowledgeChunkDoc>(COLLECTIONS.knowledgeChunks);

export const publicKnowledgeBase = (d: KnowledgeBaseDoc): KnowledgeBase => ({
  id: d._id,
  name: d.name,
  description: d.description,
  document_count: d.document_count,
  chunk_count: d.chunk_count,
  created_at: d.created_at.toISOString(),
  updated_at: d.updated_at.toISOString(),
});

export const publicKnowledgeDocument = (d: KnowledgeDocumentDoc): KnowledgeDocument => ({
  id: d._id,
  knowledge_base_id: d.knowledge_base_id,
  filename: d.filename,
  content_type: d.content_type,
  size_bytes: d.size_bytes,
  chunk_count: d.chunk_count,
  created_at: d.created_at.toISOString(),
});
