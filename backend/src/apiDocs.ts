// The API reference, without auth: the OpenAPI document (GET /api/v1/openapi.json, `servers` from PUBLIC_URL)
// and an HTML page rendering it (GET /docs) with Redoc's standalone bundle from the `redoc` npm package,
// served from node_modules by this backend: the page loads nothing from anywhere else.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Router } from '@koa/router';
import type { Services } from './core/deps.js';
import { openapiDocument } from './openapi.js';

export const REDOC_SCRIPT_PATH = '/docs/redoc.standalone.js';

/**
 * The page's policy: its own script only (no inline script, no eval); Redoc's styles are injected
 * <style> elements (styled-components), its search runs in a worker made from a blob, its logo and icons
 * may be data: images, and it fetches the document from this origin. (Its sidebar's "API docs by Redocly"
 * link shows a logo from Redocly's CDN: the policy blocks it and Redoc then leaves it out.)
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Voice platform API reference</title>
<link rel="icon" href="data:,">
</head>
<body style="margin:0">
<redoc spec-url="/api/v1/openapi.json" required-props-first="true" expand-responses="200,201,202,204"></redoc>
<script src="${REDOC_SCRIPT_PATH}"></script>
</body>
</html>
`;

let script: Promise<Buffer> | undefined;
/** Redoc's bundle, read once (about 1 MB); a failed read is tried again on the next request. */
function redocScript(): Promise<Buffer> {
  script ??= readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js')).catch((err: unknown) => {
    script = undefined;
    throw err;
  });
  return script;
}

export function apiDocsRoutes(router: Router, svc: Services): void {
  const doc = openapiDocument(svc.version, svc.settings.PUBLIC_URL);
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.body = doc;
  });
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get(REDOC_SCRIPT_PATH, async (ctx) => {
    const body = await redocScript();
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = body;
  });
}
