// The pieces of the per-replica cache (cache.ts) that the stores use: a request's view (the epoch it read)
// and the tables of entries, kept only under the epoch their owner (StoreCache) holds. No document types
// here, so every store can use a table without depending on the cache that lists them all.
const ENTRY_MAX_AGE_MS = 10_000;
const MAX_ENTRIES = 10_000;

/** What one request may use the cache under: the epoch it read, or null (read the database). */
export interface CacheView {
  readonly epoch: string | null;
}

/** The request's view: read once, by the first part of the request that needs one (Koa's ctx.state). */
export async function requestView(cache: { view(): Promise<CacheView> }, state: { cacheView?: CacheView }): Promise<CacheView> {
  if (!state.cacheView) state.cacheView = await cache.view();
  return state.cacheView;
}

/** What a table reads the current epoch from (the StoreCache that owns it). */
interface CacheOwner {
  readonly epoch: string | null;
}

interface Entry<T> {
  value: T;
  at: number;
}

/** One kind of entry (bots by id, keys by hash, …), emptied whenever the epoch moves. */
export class CacheTable<T> {
  readonly #entries = new Map<string, Entry<T>>();
  constructor(private readonly owner: CacheOwner) {}

  /** The entry, else `load()` (the database); only found values are kept, and only under the current epoch. */
  async get(view: CacheView, id: string, load: () => Promise<T | null>): Promise<T | null> {
    const usable = view.epoch !== null && this.owner.epoch === view.epoch;
    if (usable) {
      const hit = this.#entries.get(id);
      if (hit && Date.now() - hit.at < ENTRY_MAX_AGE_MS) return hit.value;
    }
    const value = await load();
    // Another request may have moved the epoch meanwhile: then this read belongs to an older one.
    if (value !== null && usable && this.owner.epoch === view.epoch) this.set(id, value);
    return value;
  }

  /** The kept entry, whatever the epoch: only a guess, to be confirmed by a view (see StoreCache.viewAndTake). */
  peek(id: string): T | undefined {
    return this.#entries.get(id)?.value;
  }

  /** Replaces a kept entry (e.g. after a write of a field the cache does not depend on). */
  update(view: CacheView, id: string, value: T): void {
    if (view.epoch !== null && this.owner.epoch === view.epoch && this.#entries.has(id)) this.set(id, value);
  }

  private set(id: string, value: T): void {
    this.#entries.delete(id);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(id, { value, at: Date.now() });
  }

  clear(): void {
    this.#entries.clear();
  }
}
