// Temp track folders left behind by a worker that died mid-call.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes call folders under `root` that nothing touched for `olderThanMs` (left by a worker that died
 * mid-call). The newest mtime inside counts, so a long call that is still writing is never taken.
 */
export async function sweepRecordings(root: string, olderThanMs: number, nowMs = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    try {
      let newestMs = (await stat(dir)).mtimeMs;
      for (const f of await readdir(dir).catch(() => [] as string[])) {
        newestMs = Math.max(newestMs, (await stat(path.join(dir, f)).catch(() => ({ mtimeMs: 0 }))).mtimeMs);
      }
      if (nowMs - newestMs < olderThanMs) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove: leave it
    }
  }
  return removed;
}
