// Bot versions in the console (shared/DESIGN.md §17): which badge a version has, and a line diff of two
// versions' snapshots (pretty-printed JSON, keys in order, so equal settings print the same lines).

/** One line of a diff: in both versions, only in the newer (added), or only in the older (removed). */
export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** Most lines a diff compares (the LCS table is lines × lines; a snapshot is a few hundred lines at most). */
export const MAX_DIFF_LINES = 3000;

/** A snapshot as the lines the diff compares: JSON with sorted keys, two spaces of indent. */
export function snapshotLines(config: unknown): string[] {
  const sort = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sort) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort((x as Record<string, unknown>)[k])])) : x;
  return JSON.stringify(sort(config), null, 2).split('\n');
}

/** The lines of `before` and `after` in order, each marked (a longest-common-subsequence diff). */
export function lineDiff(before: string[], after: string[]): DiffLine[] {
  const a = before.slice(0, MAX_DIFF_LINES);
  const b = after.slice(0, MAX_DIFF_LINES);
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs: Uint16Array[] = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ kind: 'removed', text: a[i++]! });
    else out.push({ kind: 'added', text: b[j++]! });
  }
  while (i < a.length) out.push({ kind: 'removed', text: a[i++]! });
  while (j < b.length) out.push({ kind: 'added', text: b[j++]! });
  return out;
}

/** A run of unchanged lines left out of a folded diff. */
export interface DiffSkip {
  kind: 'skip';
  count: number;
}

/** The diff with only `context` unchanged lines kept around each change; longer unchanged runs become one skip. */
export function foldDiff(lines: DiffLine[], context = 2): Array<DiffLine | DiffSkip> {
  const near = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.kind === 'same') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) near[k] = true;
  });
  const out: Array<DiffLine | DiffSkip> = [];
  lines.forEach((l, i) => {
    if (near[i]) out.push(l);
    else {
      const last = out[out.length - 1];
      if (last?.kind === 'skip') last.count++;
      else out.push({ kind: 'skip', count: 1 });
    }
  });
  return out;
}

/** What a version is to its bot: the one calls run, a draft (newer than that, not published), or an earlier/other one. */
export function versionBadge(version: number, bot: { version: number; published_version: number }): 'published' | 'draft' | null {
  if (version === bot.published_version) return 'published';
  if (version > bot.published_version) return 'draft';
  return null;
}
