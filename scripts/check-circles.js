// No import circles in the TypeScript sources (scripts/test.sh runs this first; a few seconds). A circle
// counts whether its imports are values or types only: a module's model (a store) never imports the
// module that uses it (a route). Before the real check, the check proves it still sees a circle: it
// must find the one in a two-file fixture, else it fails too (so a broken set-up cannot pass silently).
// `node scripts/check-circles.js` exits 1 on any circle and names the ones it finds (each chain of files).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Every workspace's sources: its folders (not dist/, node_modules/ or hidden ones) and .ts files at its top. */
const DIRS = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces.flatMap((ws) =>
  readdirSync(path.join(root, ws), { withFileTypes: true })
    .filter((e) => (e.isDirectory() ? !['dist', 'node_modules'].includes(e.name) && !e.name.startsWith('.') : /(?<!\.d)\.ts$/.test(e.name)))
    .map((e) => `${ws}/${e.name}`),
);

/** The .ts files under `dirs` (paths relative to `baseDir`) and their circles, each as its chain of files. */
async function scan(baseDir, dirs) {
  const graph = await madge(dirs.map((d) => path.join(baseDir, d)), { baseDir, fileExtensions: ['ts'], excludeRegExp: [/\.d\.ts$/] });
  return { files: Object.keys(graph.obj()).length, circles: graph.circular() };
}

/** A circle as the sources write it: one module imports a type of the other, with NodeNext's `.js` specifiers. */
async function selfCheck() {
  const dir = mkdtempSync(path.join(tmpdir(), 'vp-circles-'));
  try {
    writeFileSync(path.join(dir, 'routes.ts'), "import { move } from './lifecycle.js';\nexport interface Doc { id: string }\nexport const route = () => move;\n");
    writeFileSync(path.join(dir, 'lifecycle.ts'), "import type { Doc } from './routes.js';\nexport const move = (d: Doc) => d.id;\n");
    const { circles } = await scan(dir, ['.']);
    return circles.length === 1 && circles[0].length === 2;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!(await selfCheck())) {
  console.error('import circles: the check did not find the circle of its own fixture; it is broken (madge, its resolution of .js imports)');
  process.exit(1);
}
const { files, circles } = await scan(root, DIRS);
if (circles.length) {
  console.error(`import circles: ${circles.length} found in ${files} files:`);
  for (const chain of circles) console.error(`  ${[...chain, chain[0]].join(' > ')}`);
  console.error('Break each one: move what both sides need (a document type, a query) into a module that imports neither, e.g. a store.');
  process.exit(1);
}
console.log(`import circles: none in ${files} files (${DIRS.join(' ')})`);
