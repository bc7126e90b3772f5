import { foldDiff, lineDiff, snapshotLines, versionBadge } from './botVersions.js';

describe('bot version diff', () => {
  it('marks the lines only the newer has as added, only the older as removed, in order', () => {
    const before = snapshotLines({ prompt: 'old', greeting: 'Hi', max_call_seconds: 300 });
    const after = snapshotLines({ greeting: 'Hi', prompt: 'new', max_call_seconds: 300 });
    expect(lineDiff(before, after)).toEqual([
      { kind: 'same', text: '{' },
      { kind: 'same', text: '  "greeting": "Hi",' },
      { kind: 'same', text: '  "max_call_seconds": 300,' },
      { kind: 'removed', text: '  "prompt": "old"' },
      { kind: 'added', text: '  "prompt": "new"' },
      { kind: 'same', text: '}' },
    ]);
  });

  it('prints equal settings the same whatever their key order; equal snapshots have no change', () => {
    const diff = lineDiff(snapshotLines({ a: 1, b: { d: 2, c: 3 } }), snapshotLines({ b: { c: 3, d: 2 }, a: 1 }));
    expect(diff.every((l) => l.kind === 'same')).toBe(true);
  });

  it('lines added at the end or removed at the start', () => {
    expect(lineDiff(['x', 'y'], ['y', 'z'])).toEqual([
      { kind: 'removed', text: 'x' },
      { kind: 'same', text: 'y' },
      { kind: 'added', text: 'z' },
    ]);
  });

  it('folds unchanged runs away from the changes into a count, keeping the context lines', () => {
    const same = (t: string) => ({ kind: 'same' as const, text: t });
    const lines = [same('a'), same('b'), same('c'), same('d'), { kind: 'added' as const, text: 'x' }, same('e'), same('f'), same('g')];
    expect(foldDiff(lines, 1)).toEqual([{ kind: 'skip', count: 3 }, same('d'), { kind: 'added', text: 'x' }, same('e'), { kind: 'skip', count: 2 }]);
    expect(foldDiff([same('a'), same('b')])).toEqual([{ kind: 'skip', count: 2 }]);
  });

  it('badges: the published version, a newer one is a draft, older ones none', () => {
    const bot = { version: 4, published_version: 2 };
    expect([1, 2, 3, 4].map((v) => versionBadge(v, bot))).toEqual([null, 'published', 'draft', 'draft']);
  });
});
