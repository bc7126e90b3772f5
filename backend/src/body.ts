// JSON request bodies: only application/json, at most 64 KiB, parsed once. Used per route after
// authentication, so an unauthenticated caller learns nothing about body handling.
import type { Context, Next } from 'koa';
import { apiError } from './errors.js';

const BODY_LIMIT_BYTES = 64 * 1024;

export async function readRaw(ctx: Context): Promise<Buffer> {
  const declared = Number(ctx.request.get('Content-Length') || NaN);
  if (declared > BODY_LIMIT_BYTES) throw apiError('payload_too_large', `body is over ${BODY_LIMIT_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) throw apiError('payload_too_large', `body is over ${BODY_LIMIT_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function jsonBody() {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!ctx.request.is('application/json')) {
      throw apiError('unsupported_media_type');
    }
    const raw = await readRaw(ctx);
    try {
      ctx.request.body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw apiError('invalid_json');
    }
    await next();
  };
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
