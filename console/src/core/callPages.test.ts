import { refetchPages, type Page } from './callPages.js';

/** A list of ids served `size` at a time, cursors being the index to continue from. */
function server(ids: string[], size = 2) {
  const calls: Array<string | undefined> = [];
  const fetchPage = async (cursor?: string): Promise<Page<{ id: string }>> => {
    calls.push(cursor);
    const from = cursor ? Number(cursor) : 0;
    const items = ids.slice(from, from + size).map((id) => ({ id }));
    return { items, next_cursor: from + size < ids.length ? String(from + size) : null };
  };
  return { fetchPage, calls };
}

describe('refetchPages', () => {
  it('re-reads as many pages as were loaded, from the top, and returns the cursor after them', async () => {
    const s = server(['new', 'a', 'b', 'c', 'd', 'e']);
    expect(await refetchPages(s.fetchPage, 2, (x) => x.id)).toEqual({ items: ['new', 'a', 'b', 'c'].map((id) => ({ id })), next_cursor: '4', pages: 2 });
    expect(s.calls).toEqual([undefined, '2']);
  });

  it('reads at least one page and stops at the end of the list', async () => {
    const s = server(['a', 'b', 'c']);
    expect(await refetchPages(s.fetchPage, 0, (x) => x.id)).toMatchObject({ next_cursor: '2', pages: 1 });
    expect(await refetchPages(s.fetchPage, 5, (x) => x.id)).toEqual({ items: ['a', 'b', 'c'].map((id) => ({ id })), next_cursor: null, pages: 2 });
  });

  it('keeps the first of duplicate items', async () => {
    const pages: Array<Page<{ id: string; v: number }>> = [
      { items: [{ id: 'a', v: 1 }, { id: 'b', v: 1 }], next_cursor: 'p2' },
      { items: [{ id: 'b', v: 2 }, { id: 'c', v: 2 }], next_cursor: null },
    ];
    const r = await refetchPages(async (c) => pages[c ? 1 : 0]!, 2, (x) => x.id);
    expect(r.items).toEqual([{ id: 'a', v: 1 }, { id: 'b', v: 1 }, { id: 'c', v: 2 }]);
  });
});
