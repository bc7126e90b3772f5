// Vite build of the console. VITE_API_URL is baked in at build time: from the environment when set,
// else from the repository's .env, else .env.example (the same settings `make up` uses).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));

function fromEnvFile(name: string): string | undefined {
  for (const file of ['.env', '.env.example']) {
    const p = `${root}${file}`;
    if (!existsSync(p)) continue;
    const m = new RegExp(`^${name}=(.*)$`, 'm').exec(readFileSync(p, 'utf8'));
    if (m) return m[1]!.trim().replace(/^["']|["']$/g, '');
  }
  return undefined;
}

const apiUrl = process.env.VITE_API_URL || fromEnvFile('VITE_API_URL') || 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [
    {
      // Records the baked-in API URL, so `make up` can tell whether dist/ matches its settings.
      name: 'vp-build-info',
      generateBundle() {
        this.emitFile({ type: 'asset', fileName: 'vp-build.json', source: `${JSON.stringify({ api_url: apiUrl })}\n` });
      },
    },
  ],
  // Only the .env files above: no console-local .env files to drift from the repository's.
  envDir: false,
  define: { 'import.meta.env.VITE_API_URL': JSON.stringify(apiUrl) },
  resolve: {
    alias: [{ find: /^@voice-platform\/schemas\/(.*)\.js$/, replacement: `${root}schemas/src/$1.ts` }],
  },
  server: { port: 5173, strictPort: true, host: '127.0.0.1' },
  preview: { port: 5173, strictPort: true, host: '127.0.0.1' },
  build: { target: 'es2022', sourcemap: true, chunkSizeWarningLimit: 400 },
});
