// Folder pairs that import each other (scripts/test.sh runs this after the import circles). Imports point one
// way in a package: composition root (app.ts, main.ts, route wiring) → domain folders → a shared kernel
// (docs/design.md, "Layers"). Two folders of a package's `src/` that import each other break that, even when no
// file circle does; the package's root files of `src/` count as one folder, "(root)". Type-only imports count;
// test files (`*.test.ts`) do not: nothing imports a test, and it may reach any layer it checks.
// Before the real count, the script proves it still sees a pair: a fixture with one pair must report 1.
// `node scripts/import-pairs.js [--strict operator,console]` prints each pair (one example import each way) and
// a total per package; it exits 1 only when a package named in --strict has a pair.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['backend', 'worker', 'operator', 'console'];

/** The `--strict a,b` argument's package names (each must be one this script counts). */
function strictArg(argv) {
  const i = argv.indexOf('--strict');
  if (i === -1) return [];
  const names = (argv[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !PACKAGES.includes(n));
  if (!names.length || unknown.length) {
    console.error(`import pairs: --strict takes a comma-separated list of ${PACKAGES.join(', ')} (got "${argv[i + 1] ?? ''}")`);
    process.exit(2);
  }
  return names;
}

/** A file's folder of `src/` (its first path segment), or "(root)" for a file at the top of `src/`. */
const folderOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '(root)');

/** The pairs of folders of `srcDir` that import each other, each with one example import per direction. */
async function pairs(srcDir) {
  const graph = (await madge(srcDir, { baseDir: srcDir, fileExtensions: ['ts'], excludeRegExp: [/\.d\.ts$/, /\.test\.ts$/] })).obj();
  /** "from\0to" → the first import seen from a file of folder `from` to a file of folder `to`. */
  const edges = new Map();
  for (const [file, deps] of Object.entries(graph)) {
    for (const dep of deps) {
      const from = folderOf(file);
      const to = folderOf(dep);
      const key = `${from}\0${to}`;
      if (from !== to && !dep.startsWith('..') && !edges.has(key)) edges.set(key, `${file} → ${dep}`);
    }
  }
  const found = [];
  for (const [key, example] of edges) {
    const [a, b] = key.split('\0');
    if (a < b && edges.has(`${b}\0${a}`)) found.push({ a, b, ab: example, ba: edges.get(`${b}\0${a}`) });
  }
  return found.sort((x, y) => `${x.a} ${x.b}`.localeCompare(`${y.a} ${y.b}`));
}

/** A fixture as the sources write it (NodeNext `.js` specifiers, a type-only import): exactly one pair. */
async function selfCheck() {
  const dir = mkdtempSync(path.join(tmpdir(), 'vp-pairs-'));
  try {
    for (const d of ['calls', 'webhooks', 'core']) mkdirSync(path.join(dir, d));
    writeFileSync(path.join(dir, 'app.ts'), "import { end } from './calls/lifecycle.js';\nimport { fail } from './core/errors.js';\nexport const app = [end, fail];\n");
    writeFileSync(path.join(dir, 'calls/lifecycle.ts'), "import { send } from '../webhooks/send.js';\nexport const end = () => send;\n");
    writeFileSync(path.join(dir, 'calls/store.ts'), "import { fail } from '../core/errors.js';\nexport interface Call { id: string }\nexport const find = fail;\n");
    writeFileSync(path.join(dir, 'webhooks/send.ts'), "import type { Call } from '../calls/store.js';\nexport const send = (c: Call) => c.id;\n");
    writeFileSync(path.join(dir, 'core/errors.ts'), 'export const fail = () => 0;\n');
    // A test reaching back up to the composition root is not a pair.
    writeFileSync(path.join(dir, 'core/errors.test.ts'), "import { app } from '../app.js';\nexport const t = app;\n");
    const found = await pairs(dir);
    return found.length === 1 && found[0].a === 'calls' && found[0].b === 'webhooks';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const strict = strictArg(process.argv.slice(2));
if (!(await selfCheck())) {
  console.error('import pairs: its own fixture did not give exactly its one pair; the count is broken (madge, its resolution of .js imports, the test files left out)');
  process.exit(1);
}
const workspaces = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces;
let failed = false;
for (const pkg of PACKAGES.filter((p) => workspaces.includes(p))) {
  const srcDir = path.join(root, pkg, 'src');
  if (!existsSync(srcDir)) continue;
  const found = await pairs(srcDir);
  const held = strict.includes(pkg);
  for (const { a, b, ab, ba } of found) {
    console.log(`  ${pkg}: ${a} ⇄ ${b}\n      ${ab}\n      ${ba}`);
  }
  const over = held && found.length > 0;
  failed ||= over;
  console.log(`import pairs: ${pkg} ${found.length}${held ? ' (strict)' : ''}${over ? ' FAILED: make its imports point one way (docs/design.md, "Layers")' : ''}`);
}
process.exit(failed ? 1 : 0);
