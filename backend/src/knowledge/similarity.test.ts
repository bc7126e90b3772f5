// The similarity scan (knowledge/similarity.ts): the WebAssembly SIMD module and its JavaScript fallback give
// every row's dot product with the query, for any dimension (rows padded to the module's 8-float step).
import { VectorMatrix } from './similarity.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

describe('VectorMatrix', () => {
  for (const dims of [1, 7, 8, 13, 1536]) {
    it(`gives every row's dot product with the query (${dims} dimensions), in WebAssembly and in JavaScript alike`, () => {
      const r = rng(dims);
      const rows = Array.from({ length: 37 }, () => Array.from({ length: dims }, r));
      const query = Array.from({ length: dims }, r);
      const expected = rows.map((v) => v.reduce((s, x, k) => s + x * query[k]!, 0));
      for (const wasm of [true, false]) {
        const m = new VectorMatrix(rows.length + 1, dims, wasm);
        expect(m.native).toBe(wasm);
        rows.forEach((v, i) => m.set(i, v));
        const got = Array.from(m.scores(query));
        expect(got).toHaveLength(rows.length + 1);
        got.slice(0, rows.length).forEach((x, i) => expect(x).toBeCloseTo(expected[i]!, 4));
        // The row never set is zeros: no similarity to anything.
        expect(got[rows.length]).toBe(0);
      }
    });
  }

  it('answers each query on its own (the query row is overwritten, not accumulated)', () => {
    const m = new VectorMatrix(2, 3);
    m.set(0, [1, 0, 0]);
    m.set(1, [0, 1, 0]);
    expect(Array.from(m.scores([0.5, 0.25, 1]))).toEqual([0.5, 0.25]);
    expect(Array.from(m.scores([0, 1, 0]))).toEqual([0, 1]);
  });
});
