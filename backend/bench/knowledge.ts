// `npm run bench:knowledge -w backend`: a turn's knowledge retrieval (knowledge/index.ts: BM25 over MiniSearch)
// over 10,000 chunks, in process as each replica keeps it, beside a plain scan of the same chunks (each query's
// words counted in every chunk) in the same run, as ratios. Target (shared/DESIGN.md §18): p95 ≤ 20 ms.
// The chunks are synthetic (a Zipf-like vocabulary of 5,000 words, ~90 words a chunk), the queries a caller's
// few words. BENCH_KNOWLEDGE_CHUNKS (default 10000), BENCH_KNOWLEDGE_QUERIES (default 500). With embeddings on,
// the blend (BM25 + each chunk's cosine similarity) is timed too, with random unit vectors of BENCH_KNOWLEDGE_DIMS
// (default 1536, text-embedding-3-small's size); the query's own embedding request is not in it.
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { KnowledgeIndex, searchIndex } from '../dist/knowledge/index.js';
import { chunkText } from '../dist/knowledge/extract.js';

const CHUNKS = Number(process.env.BENCH_KNOWLEDGE_CHUNKS ?? 10_000);
const QUERIES = Number(process.env.BENCH_KNOWLEDGE_QUERIES ?? 500);
const TARGET_P95_MS = 20;
const DIMS = Number(process.env.BENCH_KNOWLEDGE_DIMS ?? 1536);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const r = rng(7);
const syllables = ['ra', 'to', 'mi', 'ne', 'ka', 'lo', 'su', 'pe', 'di', 'ba', 'ver', 'tan', 'gor', 'lin', 'mes'];
const vocabulary = Array.from({ length: 5000 }, (_, i) => {
  let w = '';
  for (let n = i + 1; n > 0; n = Math.floor(n / syllables.length)) w += syllables[n % syllables.length];
  return w;
});
/** A word, frequent ones more often (Zipf-like). */
const word = () => vocabulary[Math.floor(vocabulary.length * r() ** 3)]!;
const sentence = () => {
  const s = Array.from({ length: 8 + Math.floor(r() * 10) }, word).join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
};

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

function time(queries: string[], f: (q: string) => unknown): number[] {
  for (const q of queries.slice(0, 20)) f(q); // warm-up
  return queries.map((q) => {
    const t = performance.now();
    f(q);
    return performance.now() - t;
  });
}

const t0 = performance.now();
const text = Array.from({ length: CHUNKS }, () => Array.from({ length: 6 }, sentence).join(' ')).join('\n\n');
const chunks = chunkText(text).slice(0, CHUNKS);
const docs = chunks.map((c, i) => ({ text: c, document: `doc${i % 50}.txt` }));
console.log(`==> ${docs.length} chunks (${Math.round(text.length / 1e6)} MB of text, chunked in ${(performance.now() - t0).toFixed(0)} ms); ${QUERIES} queries`);
const b0 = performance.now();
const idx = KnowledgeIndex.build(1, docs);
const buildMs = performance.now() - b0;
const queries = Array.from({ length: QUERIES }, () => Array.from({ length: 2 + Math.floor(r() * 5) }, word).join(' '));

const bm25 = time(queries, (q) => searchIndex(idx, q, 3));
const unitVector = () => {
  const v = Array.from({ length: DIMS }, () => r() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const withVectors = docs.map((d) => ({ ...d, vector: unitVector() }));
const vIdx = KnowledgeIndex.build(1, withVectors);
// The same similarity scan in a JavaScript loop (knowledge/similarity.ts's fallback), what WebAssembly SIMD saves.
const vIdxJs = KnowledgeIndex.build(1, withVectors, false);
const qVectors = new Map(queries.map((q) => [q, unitVector()]));
const blended = time(queries, (q) => searchIndex(vIdx, q, 3, qVectors.get(q)!));
const blendedJs = time(queries, (q) => searchIndex(vIdxJs, q, 3, qVectors.get(q)!));
// The baseline: every chunk's words counted against the query's (what an index avoids).
const lowered = docs.map((d) => d.text.toLowerCase().split(/\W+/));
const scan = time(queries, (q) => {
  const terms = new Set(q.toLowerCase().split(' '));
  return lowered
    .map((ws, i) => ({ i, score: ws.reduce((n, w) => n + (terms.has(w) ? 1 : 0), 0) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 3);
});

console.log(`\nload average ${loadavg().map((x) => x.toFixed(2)).join(' ')} (a shared machine); index built in ${buildMs.toFixed(0)} ms`);
console.log('\n| retrieval of the top 3 | p50 ms | p95 ms | p95 ÷ scan p95 |');
console.log('|---|---:|---:|---:|');
console.log(`| BM25 index (MiniSearch, in process) | ${pct(bm25, 50).toFixed(2)} | ${pct(bm25, 95).toFixed(2)} | ${(pct(bm25, 95) / pct(scan, 95)).toPrecision(2)} |`);
console.log(`| BM25 + ${DIMS}-dim vectors blended (embeddings on; WebAssembly SIMD scan: ${vIdx.vectors!.native}) | ${pct(blended, 50).toFixed(2)} | ${pct(blended, 95).toFixed(2)} | ${(pct(blended, 95) / pct(scan, 95)).toPrecision(2)} |`);
console.log(`| the same, the scan in a JavaScript loop | ${pct(blendedJs, 50).toFixed(2)} | ${pct(blendedJs, 95).toFixed(2)} | ${(pct(blendedJs, 95) / pct(scan, 95)).toPrecision(2)} |`);
console.log(`| plain scan of every chunk (baseline) | ${pct(scan, 50).toFixed(2)} | ${pct(scan, 95).toFixed(2)} | 1.0 |`);
const ok = pct(bm25, 95) <= TARGET_P95_MS && pct(blended, 95) <= TARGET_P95_MS;
console.log(`\nBM25 p95 ${pct(bm25, 95).toFixed(2)} ms, blended p95 ${pct(blended, 95).toFixed(2)} ms: ${ok ? 'within' : 'OVER'} the ${TARGET_P95_MS} ms target`);
process.exitCode = ok ? 0 : 1;
