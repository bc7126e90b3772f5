// The chunks' unit vectors and their dot products with a query's, in WebAssembly SIMD: a scan of 10,000
// 1536-dimension vectors takes ~2.5 ms there against ~20 ms in a JavaScript loop (the bench), which is what
// keeps a blended retrieval within its 20 ms p95. The module is a dozen instructions, encoded below from
// named opcodes rather than shipped as a binary; memory holds [query row | scores | matrix rows].

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s)];
const section = (id: number, bytes: number[]): number[] => [id, ...uleb(bytes.length), ...bytes];

const I32 = 0x7f;
const V128 = 0x7b;
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const END = 0x0b;
const br = (depth: number) => [0x0c, depth];
const brIf = (depth: number) => [0x0d, depth];
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const i32Const = (n: number) => [0x41, ...uleb(n)]; // small non-negative constants only (sleb = uleb below 64)
const I32_ADD = 0x6a;
const I32_SHL = 0x74;
const I32_GE_U = 0x4f;
const F32_ADD = 0x92;
const f32Store = [0x38, 2, 0];
const simd = (op: number) => [0xfd, ...uleb(op)];
const v128Load = (offset: number) => [...simd(0x00), 4, offset];
const V128_ZERO = [...simd(0x0c), ...new Array<number>(16).fill(0)];
const F32X4_ADD = simd(0xe4);
const F32X4_MUL = simd(0xe6);
const lane = (i: number) => [...simd(0x1f), i];

/** Bytes of a row the loop takes at a time: two 4-lane accumulators. */
const STEP_BYTES = 32;

// scores(matrix, query, out, rows, rowBytes): out[i] = Σ matrix[i][k]·query[k], rowBytes a multiple of 32.
const [MATRIX, QUERY, OUT, ROWS, ROW_BYTES, I, K, A, B] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const mulAdd = (acc: number, offset: number) => [
  ...get(acc),
  ...get(MATRIX), ...get(K), I32_ADD, ...v128Load(offset),
  ...get(QUERY), ...get(K), I32_ADD, ...v128Load(offset),
  ...F32X4_MUL, ...F32X4_ADD, ...set(acc),
];
const body = [
  ...vec([[2, I32], [2, V128]]),
  ...BLOCK, ...LOOP,
  ...get(I), ...get(ROWS), I32_GE_U, ...brIf(1),
  ...V128_ZERO, ...set(A), ...V128_ZERO, ...set(B), ...i32Const(0), ...set(K),
  ...BLOCK, ...LOOP,
  ...get(K), ...get(ROW_BYTES), I32_GE_U, ...brIf(1),
  ...mulAdd(A, 0), ...mulAdd(B, 16),
  ...get(K), ...i32Const(STEP_BYTES), I32_ADD, ...set(K),
  ...br(0),
  END, END,
  ...get(A), ...get(B), ...F32X4_ADD, ...set(A),
  ...get(OUT), ...get(I), ...i32Const(2), I32_SHL, I32_ADD,
  ...get(A), ...lane(0), ...get(A), ...lane(1), F32_ADD, ...get(A), ...lane(2), F32_ADD, ...get(A), ...lane(3), F32_ADD,
  ...f32Store,
  ...get(MATRIX), ...get(ROW_BYTES), I32_ADD, ...set(MATRIX),
  ...get(I), ...i32Const(1), I32_ADD, ...set(I),
  ...br(0),
  END, END,
  END,
];
const MODULE_BYTES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])),
  ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])),
  ...section(3, vec([[0]])),
  ...section(7, vec([[...name('scores'), 0x00, 0]])),
  ...section(10, vec([[...uleb(body.length), ...body]])),
]);

/** The little of the WebAssembly API used here (the backend's TypeScript libs carry no declarations of it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let compiled: object | null | undefined;
/** The compiled module, or null where WebAssembly SIMD is unavailable (the JavaScript loop then). */
function module(): object | null {
  if (compiled === undefined) {
    try {
      compiled = new Wasm.Module(MODULE_BYTES);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

const PAGE_BYTES = 65_536;
/** Above this a matrix stays in JavaScript memory (a 32-bit WebAssembly memory holds 4 GiB at most). */
const MAX_WASM_BYTES = 2 ** 31;

/** `rows` vectors of `dims` numbers, and each one's dot product with a query. */
export class VectorMatrix {
  private readonly rowFloats: number;
  private readonly query: Float32Array;
  private readonly out: Float32Array;
  private readonly matrix: Float32Array;
  private readonly scan: ((matrix: number, query: number, out: number, rows: number, rowBytes: number) => void) | null = null;

  /** `wasm` false keeps the scan in JavaScript (the fallback, and the bench's baseline). */
  constructor(readonly rows: number, readonly dims: number, wasm = true) {
    this.rowFloats = Math.ceil(dims / (STEP_BYTES / 4)) * (STEP_BYTES / 4);
    const rowBytes = this.rowFloats * 4;
    const bytes = rowBytes + rows * 4 + rows * rowBytes;
    const mod = wasm && bytes <= MAX_WASM_BYTES ? module() : null;
    let buffer: ArrayBuffer;
    if (mod) {
      const memory = new Wasm.Memory({ initial: Math.ceil(bytes / PAGE_BYTES) });
      const instance = new Wasm.Instance(mod, { env: { memory } });
      this.scan = instance.exports.scores as NonNullable<VectorMatrix['scan']>;
      buffer = memory.buffer;
    } else {
      buffer = new ArrayBuffer(bytes);
    }
    this.query = new Float32Array(buffer, 0, this.rowFloats);
    this.out = new Float32Array(buffer, rowBytes, rows);
    this.matrix = new Float32Array(buffer, rowBytes + rows * 4, rows * this.rowFloats);
  }

  /** Row `i`'s vector (a row never set is zeros: no similarity to anything). */
  set(i: number, vector: ArrayLike<number>): void {
    this.matrix.set(vector, i * this.rowFloats);
  }

  /** Every row's dot product with `vector` (dims long), in a view reused by the next call. */
  scores(vector: ArrayLike<number>): Float32Array {
    this.query.set(vector);
    if (this.scan) {
      this.scan(this.matrix.byteOffset, this.query.byteOffset, this.out.byteOffset, this.rows, this.rowFloats * 4);
      return this.out;
    }
    const { matrix: m, query: q, out, rowFloats } = this;
    for (let i = 0, row = 0; i < this.rows; i++, row += rowFloats) {
      let a = 0;
      let b = 0;
      let c = 0;
      let d = 0;
      for (let k = 0; k < rowFloats; k += 4) {
        a += m[row + k]! * q[k]!;
        b += m[row + k + 1]! * q[k + 1]!;
        c += m[row + k + 2]! * q[k + 2]!;
        d += m[row + k + 3]! * q[k + 3]!;
      }
      out[i] = a + b + c + d;
    }
    return out;
  }

  /** Whether the scan runs in WebAssembly (false: the JavaScript loop). */
  get native(): boolean {
    return this.scan !== null;
  }
}
