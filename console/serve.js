// A small static server for the production build (console/dist): long-lived caching for hashed
// assets, no caching for index.html, the SPA fallback so deep links like /bots/abc load the app, and the
// console's Content-Security-Policy (csp.js) for the API URL the build was made for and the LiveKit URL
// (LIVEKIT_PUBLIC_URL, else LIVEKIT_URL, else the one recorded at build).
// Usage: PORT=5173 [DIST_DIR=dist] [HOST=127.0.0.1] [LIVEKIT_PUBLIC_URL=ws://…] node serve.js
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { consoleCsp } from './csp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
/** @param {{ dir: string, livekitUrl?: string }} opts */
export function createConsoleServer({ dir, livekitUrl }) {
  const root = path.resolve(dir);
  const index = path.join(root, 'index.html');
  /** @type {{ api_url?: string, livekit_url?: string }} */
  let build = {};
  try {
    build = JSON.parse(readFileSync(path.join(root, 'vp-build.json'), 'utf8'));
  } catch {
    // a build without its record: the policy then allows the console's own origin only
  }
  const SECURITY_HEADERS = {
    'Content-Security-Policy': consoleCsp({ apiUrl: build.api_url, livekitUrl: livekitUrl || build.livekit_url }),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  };
  return http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', ...SECURITY_HEADERS }).end();
      return;
    }
    if (req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' }).end('ok');
      return;
    }
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      res.writeHead(400, SECURITY_HEADERS).end();
      return;
    }
    // Resolve inside root only: `..` segments can never escape it.
    const file = path.join(root, path.normalize(pathname).replace(/^(\.\.[/\\])+/, ''));
    const inside = file.startsWith(root + path.sep);
    const isFile = inside && existsSync(file) && statSync(file).isFile();
    // Missing files with an extension are real 404s (a broken asset must not come back as HTML).
    if (!isFile && path.extname(pathname)) {
      res.writeHead(404, { 'Content-Type': 'text/plain', ...SECURITY_HEADERS }).end('not found');
      return;
    }
    const target = isFile ? file : index;
    const ext = path.extname(target);
    res.writeHead(200, {
      'Content-Type': TYPES[ext] ?? 'application/octet-stream',
      'Cache-Control': target.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...SECURITY_HEADERS,
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(target).pipe(res);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.env.DIST_DIR ?? path.join(here, 'dist');
  const port = Number(process.env.PORT ?? 5173);
  const host = process.env.HOST ?? '127.0.0.1';
  if (!existsSync(path.join(dir, 'index.html'))) {
    console.error(`console: ${dir}/index.html is missing; run \`npm run build -w console\` first`);
    process.exit(1);
  }
  const server = createConsoleServer({ dir, livekitUrl: process.env.LIVEKIT_PUBLIC_URL || process.env.LIVEKIT_URL });
  server.listen(port, host, () => console.log(`console: serving ${dir} on http://${host}:${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
