// Knowledge bases (shared/DESIGN.md §18): documents (text, Markdown, HTML, PDF) split into chunks a bot's
// turns retrieve passages from.
import { Type, type Static } from '@sinclair/typebox';

/** A document's largest size, in bytes (over: 413). */
export const MAX_KNOWLEDGE_DOCUMENT_BYTES = 10 * 1024 * 1024;
/** The media types a document may have (others: 415). */
export const KNOWLEDGE_MEDIA_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf'] as const;
export type KnowledgeMediaType = (typeof KNOWLEDGE_MEDIA_TYPES)[number];

export const KnowledgeBaseCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export type KnowledgeBaseCreate = Static<typeof KnowledgeBaseCreate>;
export const KnowledgeBaseUpdate = Type.Partial(KnowledgeBaseCreate, { additionalProperties: false, minProperties: 1 });
export type KnowledgeBaseUpdate = Static<typeof KnowledgeBaseUpdate>;

export const KnowledgeBase = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    document_count: Type.Integer(),
    chunk_count: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type KnowledgeBase = Static<typeof KnowledgeBase>;

export const KnowledgeDocument = Type.Object(
  {
    id: Type.String(),
    knowledge_base_id: Type.String(),
    filename: Type.String(),
    content_type: Type.Union(KNOWLEDGE_MEDIA_TYPES.map((t) => Type.Literal(t))),
    size_bytes: Type.Integer(),
    chunk_count: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type KnowledgeDocument = Static<typeof KnowledgeDocument>;

/** A passage retrieved for a turn (the worker's GET /api/v1/config/knowledge). */
export const KnowledgePassage = Type.Object(
  { text: Type.String(), document: Type.String(), knowledge_base_id: Type.String(), score: Type.Number() },
  { additionalProperties: false },
);
export type KnowledgePassage = Static<typeof KnowledgePassage>;
