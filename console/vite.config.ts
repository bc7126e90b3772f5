// Vite build of the console. VITE_API_URL is baked in at build time: from the environment when set,
// else from the repository's .env, else .env.example (the same settings `make up` uses). The dev and
// preview servers send the console's Content-Security-Policy (csp.js) for that API and the LiveKit URL
// (LIVEKIT_PUBLIC_URL, else LIVEKIT_URL, found the same way); the build records both for serve.js.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { consoleCsp } from './csp.js';

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
const livekitUrl = process.env.LIVEKIT_PUBLIC_URL || process.env.LIVEKIT_URL || fromEnvFile('LIVEKIT_PUBLIC_URL') || fromEnvFile('LIVEKIT_URL') || '';
const headers = { 'Content-Security-Policy': consoleCsp({ apiUrl, livekitUrl }), 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

export default defineConfig({
  plugins: [
    {
      // Records the baked-in API URL, so `make up` can tell whether dist/ matches its settings.
      name: 'vp-build-info',
      generateBundle() {
        this.emitFile({ type: 'asset', fileName: 'vp-build.json', source: `${JSON.stringify({ api_url: apiUrl, livekit_url: livekitUrl })}\n` });
      },
    },
  ],
  // Only the .env files above: no console-local .env files to drift from the repository's.
  envDir: false,
  define: { 'import.meta.env.VITE_API_URL': JSON.stringify(apiUrl) },
  resolve: {
    alias: [{ find: /^@voice-platform\/schemas\/(.*)\.js$/, replacement: `${root}schemas/src/$1.ts` }],
  },
  server: { port: 5173, strictPort: true, host: '127.0.0.1', headers },
  preview: { port: 5173, strictPort: true, host: '127.0.0.1', headers },
  build: { target: 'es2022', sourcemap: true, chunkSizeWarningLimit: 400 },
});
