// Reads the pinned versions (tests/infra/versions.env) and locates the binaries scripts/setup.sh built.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Walks up from this file to the repository root (works from src/ and from dist/). */
function findRepoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'tests', 'infra', 'versions.env'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the repository root (tests/infra/versions.env)');
    dir = parent;
  }
}

export const repoRoot = findRepoRoot();

export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq < 1) continue;
    let value = line.slice(eq + 1).trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1);
    }
    out[line.slice(0, eq).trim()] = value;
  }
  return out;
}

export const versions = parseEnvFile(readFileSync(path.join(repoRoot, 'tests', 'infra', 'versions.env'), 'utf8'));

export const cacheDir = process.env.VP_CACHE_DIR ?? path.join(homedir(), '.cache', 'voice-platform');

const pinned: Record<string, string> = {
  ferretdb: 'FERRETDB_VERSION',
  minio: 'MINIO_VERSION',
  helm: 'HELM_VERSION',
  'kube-apiserver': 'KUBE_VERSION',
  'livekit-server': 'LIVEKIT_VERSION',
  'livekit-sip': 'LIVEKIT_SIP_VERSION',
  jaeger: 'JAEGER_VERSION',
};

/** Path of a binary: a pinned Go build from the cache, or a Debian package's from PATH. */
export function binary(name: string): string {
  const versionKey = pinned[name];
  if (versionKey) {
    const version = versions[versionKey];
    const file = path.join(cacheDir, 'bin', `${name}-${version}`, name);
    if (!existsSync(file)) throw new Error(`${name} ${version} is not built: run \`make setup\` (expected ${file})`);
    return file;
  }
  for (const dir of (process.env.PATH ?? '/usr/bin').split(':').concat(['/usr/bin', '/usr/sbin'])) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  throw new Error(`${name} is not installed: run \`make setup\``);
}
