// Each replica's in-process search index of the knowledge bases (BM25, MiniSearch), one per base, built from
// its chunks in MongoDB. Every document change moves the base's `version` (store.ts): a retrieval reads the
// versions of the bases it searches (one small query) and rebuilds a base whose version moved, so every
// replica answers from what is stored, without a message between them.
// With embeddings (KNOWLEDGE_EMBEDDINGS_MODEL), chunks carry unit vectors: a query's vector ranks them by cosine
// similarity too, and the two rankings are blended (VECTOR_WEIGHT of the similarity, the rest BM25 over the
// best BM25 score of the base), so a passage with none of the caller's words can still be found.
import MiniSearch from 'minisearch';
import type { Db } from 'mongodb';
import type { KnowledgePassage } from '@voice-platform/schemas';
import { knowledgeBases, knowledgeChunks } from './store.js';
import { VectorMatrix } from './similarity.js';

interface BuiltIndex {
  version: number;
  search: MiniSearch<{ id: number; text: string }>;
  chunks: Array<{ text: string; document: string }>;
  /** The chunks' unit vectors, a row each (a row of zeros: the chunk has none); null without embeddings. */
  vectors: VectorMatrix | null;
  dims: number;
}

/** The similarity's share of a blended score. */
export const VECTOR_WEIGHT = 0.5;

/** The search's options: BM25 on whole words, any of them (prefix and fuzzy matching cost 5-10× at 10,000 chunks: the bench). */
const SEARCH = { combineWith: 'OR' as const };

export class KnowledgeIndex {
  private readonly built = new Map<string, BuiltIndex>();
  private readonly building = new Map<string, Promise<BuiltIndex>>();

  constructor(private readonly db: Db) {}

  /** Builds the index of chunks given (the bench's and the rebuild's one step). */
  static build(version: number, chunks: Array<{ text: string; document: string; vector?: number[] | null }>, wasm = true): BuiltIndex {
    const search = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], storeFields: [] });
    search.addAll(chunks.map((c, id) => ({ id, text: c.text })));
    const dims = chunks.find((c) => c.vector?.length)?.vector?.length ?? 0;
    let vectors: VectorMatrix | null = null;
    if (dims) {
      const m = new VectorMatrix(chunks.length, dims, wasm);
      chunks.forEach((c, i) => c.vector?.length === dims && m.set(i, c.vector));
      vectors = m;
    }
    return { version, search, chunks: chunks.map(({ text, document }) => ({ text, document })), vectors, dims };
  }

  private async load(kbId: string, version: number): Promise<BuiltIndex> {
    const docs = await knowledgeChunks(this.db).find({ knowledge_base_id: kbId }, { projection: { text: 1, filename: 1, vector: 1 } }).toArray();
    return KnowledgeIndex.build(version, docs.map((d) => ({ text: d.text, document: d.filename, vector: d.vector ?? null })));
  }

  /** The base's index at `version` (built once per version, concurrent askers sharing the build). */
  private async index(kbId: string, version: number): Promise<BuiltIndex> {
    const have = this.built.get(kbId);
    if (have && have.version === version) return have;
    const key = `${kbId}:${version}`;
    let p = this.building.get(key);
    if (!p) {
      p = this.load(kbId, version).finally(() => this.building.delete(key));
      this.building.set(key, p);
    }
    const idx = await p;
    if ((this.built.get(kbId)?.version ?? -1) <= version) this.built.set(kbId, idx);
    return idx;
  }

  /** The best `limit` passages of the bases for `query` (and its unit vector, with embeddings), best first. */
  async retrieve(kbIds: string[], query: string, limit: number, queryVector: number[] | null = null): Promise<KnowledgePassage[]> {
    if (!kbIds.length || !query.trim()) return [];
    const bases = await knowledgeBases(this.db).find({ _id: { $in: kbIds } }, { projection: { version: 1 } }).toArray();
    for (const id of this.built.keys()) if (!bases.some((b) => b._id === id) && kbIds.includes(id)) this.built.delete(id);
    const found = await Promise.all(bases.map(async (b) => ({ id: b._id, idx: await this.index(b._id, b.version) })));
    return found.flatMap(({ id, idx }) => searchIndex(idx, query, limit, queryVector).map((p) => ({ ...p, knowledge_base_id: id }))).sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** One index's best passages (the bench measures this): BM25, blended with vector similarity when given a query vector. */
export function searchIndex(idx: BuiltIndex, query: string, limit: number, queryVector: number[] | null = null): Array<{ text: string; document: string; score: number }> {
  const hits = idx.search.search(query, SEARCH);
  const m = idx.vectors;
  if (!queryVector || !m || queryVector.length !== idx.dims) return hits.slice(0, limit).map((r) => ({ ...idx.chunks[r.id as number]!, score: round(r.score) }));
  const best = hits[0]?.score ?? 1;
  const n = idx.chunks.length;
  const scores = new Float32Array(n);
  for (const r of hits) scores[r.id as number] = (1 - VECTOR_WEIGHT) * (r.score / best);
  const dots = m.scores(queryVector);
  for (let i = 0; i < n; i++) if (dots[i]! > 0) scores[i]! += VECTOR_WEIGHT * dots[i]!;
  // The best `limit` in one pass (limit is small): no sort of every chunk.
  const top: number[] = [];
  for (let i = 0; i < n; i++) {
    if (scores[i]! <= 0 || (top.length === limit && scores[i]! <= scores[top[top.length - 1]!]!)) continue;
    let at = top.length;
    while (at > 0 && scores[top[at - 1]!]! < scores[i]!) at--;
    top.splice(at, 0, i);
    if (top.length > limit) top.pop();
  }
  return top.map((i) => ({ ...idx.chunks[i]!, score: round(scores[i]!) }));
}
