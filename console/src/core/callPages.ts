// The calls list's refresh: re-read as many pages as the administrator has loaded ("Load more"),
// from the top, so new calls appear first and every visible row gets its current status, while the
// list keeps its length and its cursor for the next "Load more".

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * Reads `pages` pages (at least one) by following `next_cursor`, stopping early at the end of the
 * list. Items are de-duplicated by `key`, first occurrence wins.
 */
export async function refetchPages<T>(fetchPage: (cursor?: string) => Promise<Page<T>>, pages: number, key: (item: T) => string): Promise<Page<T> & { pages: number }> {
  const seen = new Set<string>();
  const items: T[] = [];
  let cursor: string | undefined;
  let read = 0;
  let next: string | null = null;
  do {
    const page = await fetchPage(cursor);
    read++;
    for (const item of page.items) {
      const k = key(item);
      if (!seen.has(k)) {
        seen.add(k);
        items.push(item);
      }
    }
    next = page.next_cursor;
    cursor = next ?? undefined;
  } while (read < Math.max(1, pages) && next);
  return { items, next_cursor: next, pages: read };
}
