// The images cannot be built on machines without a Docker engine (CI's included), so their
// Dockerfiles are checked statically against the repository: what they copy exists, npm ci sees every
// workspace, the TypeScript projects they compile have their references copied, they run as non-root
// from pinned bases, and they start a program the package really has.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../infra/src/versions.js';

interface Instruction {
  op: string;
  args: string;
}

function parse(file: string): Instruction[][] {
  const text = readFileSync(file, 'utf8').replace(/\\\n/g, ' ');
  const stages: Instruction[][] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [op, ...rest] = line.split(/\s+/);
    const ins = { op: op!.toUpperCase(), args: rest.join(' ') };
    if (ins.op === 'FROM') stages.push([]);
    stages[stages.length - 1]?.push(ins);
  }
  return stages;
}

const dockerDir = path.join(repoRoot, 'docker');
const dockerfiles = readdirSync(dockerDir).filter((f) => f.endsWith('.Dockerfile'));
const workspaces = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;

/** tsconfig project references, transitively, as repo-relative folders. */
function projectClosure(dir: string, seen = new Set<string>()): Set<string> {
  if (seen.has(dir)) return seen;
  seen.add(dir);
  const cfg = JSON.parse(readFileSync(path.join(repoRoot, dir, 'tsconfig.json'), 'utf8')) as { references?: Array<{ path: string }> };
  for (const ref of cfg.references ?? []) projectClosure(path.normalize(path.join(dir, ref.path)), seen);
  return seen;
}

describe.each(dockerfiles)('docker/%s', (name) => {
  const stages = parse(path.join(dockerDir, name));
  const all = stages.flat();
  const copies = all.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'));
  const sources = copies.flatMap((c) => c.args.split(/\s+/).filter((a) => !a.startsWith('--')).slice(0, -1));

  it('copies only paths that exist, from bases pinned to a version', () => {
    expect(copies.length).toBeGreaterThan(0);
    for (const src of sources) expect([src, existsSync(path.join(repoRoot, src))]).toEqual([src, true]);
    for (const from of all.filter((i) => i.op === 'FROM')) {
      const image = from.args.split(/\s+/)[0]!;
      expect(image).toMatch(/^[\w./-]+:[\w.-]+$/);
      expect(image.endsWith(':latest')).toBe(false);
    }
  });

  it('gives npm ci every workspace manifest and compiles what its projects reference', () => {
    const ci = all.findIndex((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args));
    expect(ci).toBeGreaterThan(0);
    const before = all.slice(0, ci).filter((i) => i.op === 'COPY').flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    for (const ws of workspaces) expect([ws, before.includes(`${ws}/package.json`)]).toEqual([ws, true]);
    expect(before).toContain('package-lock.json');
    const covered = (p: string) => sources.some((s) => p === s || p.startsWith(`${s}/`));
    for (const run of all.filter((i) => i.op === 'RUN' && /tsc -b \w+/.test(i.args))) {
      const project = /tsc -b (\w+)/.exec(run.args)![1]!;
      for (const dir of projectClosure(project)) expect([dir, covered(`${dir}/tsconfig.json`)]).toEqual([dir, true]);
    }
  });

  it('runs unprivileged and starts a program its package has', () => {
    const final = stages[stages.length - 1]!;
    const user = final.filter((i) => i.op === 'USER').pop();
    if (!name.startsWith('console')) {
      // The console's nginx base already runs as an unprivileged user.
      expect(user?.args).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
      const workdir = final.filter((i) => i.op === 'WORKDIR').pop()!.args;
      const pkg = path.basename(workdir);
      const cmd = JSON.parse(final.find((i) => i.op === 'CMD')!.args) as string[];
      expect(cmd).toEqual(['node', 'dist/main.js']);
      expect(existsSync(path.join(repoRoot, pkg, 'src', 'main.ts'))).toBe(true);
    } else {
      expect(final[0]!.args).toMatch(/^nginxinc\/nginx-unprivileged:/);
    }
  });
});
