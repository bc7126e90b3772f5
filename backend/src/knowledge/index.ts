// Each replica's in-process search index of the knowledge bases (BM25, MiniSearch), one per base, built from
// its chunks in MongoDB. Every document change moves the base's `version` (store.ts): a retrieval reads the
// versions of the bases it searches (one small query) and rebuilds a base whose version moved, so every
// replica answers from what is stored, without a message between them.
import MiniSearch from 'minisearch';
import type { Db } from 'mongodb';
import type { KnowledgePassage } from '@voice-platform/schemas';
import { knowledgeBases, knowledgeChunks } from './store.js';

interface BuiltIndex {
  version: number;
  search: MiniSearch<{ id: number; text: string }>;
  chunks: Array<{ text: string; document: string }>;
}

/** The search's options: BM25 on whole words, any of them (prefix and fuzzy matching cost 5-10× at 10,000 chunks: the bench). */
const SEARCH = { combineWith: 'OR' as const };

export class KnowledgeIndex {
  private readonly built = new Map<string, BuiltIndex>();
  private readonly building = new Map<string, Promise<BuiltIndex>>();

  constructor(private readonly db: Db) {}

  /** Builds the index of chunks given (the bench's and the rebuild's one step). */
  static build(version: number, chunks: Array<{ text: string; document: string }>): BuiltIndex {
    const search = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], storeFields: [] });
    search.addAll(chunks.map((c, id) => ({ id, text: c.text })));
    return { version, search, chunks };
  }

  private async load(kbId: string, version: number): Promise<BuiltIndex> {
    const docs = await knowledgeChunks(this.db).find({ knowledge_base_id: kbId }, { projection: { text: 1, filename: 1 } }).toArray();
    return KnowledgeIndex.build(version, docs.map((d) => ({ text: d.text, document: d.filename })));
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

  /** The best `limit` passages of the bases for `query`, best first. */
  async retrieve(kbIds: string[], query: string, limit: number): Promise<KnowledgePassage[]> {
    if (!kbIds.length || !query.trim()) return [];
    const bases = await knowledgeBases(this.db).find({ _id: { $in: kbIds } }, { projection: { version: 1 } }).toArray();
    for (const id of this.built.keys()) if (!bases.some((b) => b._id === id) && kbIds.includes(id)) this.built.delete(id);
    const found = await Promise.all(bases.map(async (b) => ({ id: b._id, idx: await this.index(b._id, b.version) })));
    return found.flatMap(({ id, idx }) => searchIndex(idx, query, limit).map((p) => ({ ...p, knowledge_base_id: id }))).sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

/** One index's best passages (the bench measures this). */
export function searchIndex(idx: BuiltIndex, query: string, limit: number): Array<{ text: string; document: string; score: number }> {
  return idx.search
    .search(query, SEARCH)
    .slice(0, limit)
    .map((r) => ({ ...idx.chunks[r.id as number]!, score: Math.round(r.score * 1000) / 1000 }));
}
