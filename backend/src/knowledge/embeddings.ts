// Vectors of knowledge chunks and queries from an OpenAI-compatible embeddings API (POST {OPENAI_BASE_URL}/embeddings,
// Bearer OPENAI_API_KEY), when KNOWLEDGE_EMBEDDINGS_MODEL is set. One request per EMBED_BATCH texts; any failure
// (unreachable, non-2xx, a body that is not the protocol's) is an EmbeddingsError naming no key or URL.
import type { Settings } from '../core/settings.js';

/** Texts per request (the API takes up to 2048; smaller requests fail less at once and time out less). */
export const EMBED_BATCH = 96;

export class EmbeddingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsError';
  }
}

export type EmbeddingSettings = Pick<Settings, 'KNOWLEDGE_EMBEDDINGS_MODEL' | 'KNOWLEDGE_EMBEDDINGS_DIMENSIONS' | 'KNOWLEDGE_EMBEDDINGS_TIMEOUT_MS' | 'OPENAI_BASE_URL' | 'OPENAI_API_KEY'>;

export const embeddingsOn = (s: EmbeddingSettings): boolean => s.KNOWLEDGE_EMBEDDINGS_MODEL !== '';

/** Unit vectors of `texts`, in order. */
export async function embed(texts: string[], s: EmbeddingSettings, timeoutMs = s.KNOWLEDGE_EMBEDDINGS_TIMEOUT_MS): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH) {
    const batch = texts.slice(i, i + EMBED_BATCH);
    let res: Response;
    try {
      res = await fetch(`${s.OPENAI_BASE_URL.replace(/\/+$/, '')}/embeddings`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(s.OPENAI_API_KEY ? { Authorization: `Bearer ${s.OPENAI_API_KEY}` } : {}) },
        body: JSON.stringify({ model: s.KNOWLEDGE_EMBEDDINGS_MODEL, input: batch, encoding_format: 'float', ...(s.KNOWLEDGE_EMBEDDINGS_DIMENSIONS ? { dimensions: s.KNOWLEDGE_EMBEDDINGS_DIMENSIONS } : {}) }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch {
      throw new EmbeddingsError(`the embeddings API did not answer within ${timeoutMs} ms`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new EmbeddingsError(`the embeddings API answered ${res.status}`);
    }
    const json = (await res.json().catch(() => null)) as { data?: Array<{ index?: unknown; embedding?: unknown }> } | null;
    const data = json?.data;
    if (!Array.isArray(data) || data.length !== batch.length) throw new EmbeddingsError('the embeddings API answered something else than one embedding per text');
    const byIndex = new Array<number[]>(batch.length);
    for (const d of data) {
      const v = d.embedding;
      if (typeof d.index !== 'number' || !Array.isArray(v) || !v.length || v.some((x) => typeof x !== 'number' || !Number.isFinite(x))) throw new EmbeddingsError('the embeddings API answered an embedding that is not a list of numbers');
      byIndex[d.index] = unit(v as number[]);
    }
    if (byIndex.some((v) => !v) || new Set(byIndex.map((v) => v.length)).size !== 1) throw new EmbeddingsError('the embeddings API answered embeddings of different sizes or indexes');
    out.push(...byIndex);
  }
  return out;
}

function unit(v: number[]): number[] {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
