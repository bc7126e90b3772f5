// Test-call tokens for `WS /ws/{bot_id}` (signed by the backend, checked by the worker, docs/design.md §4):
// `vt1.<base64url JSON claims>.<base64url HMAC-SHA256>`. The key is derived from WORKER_AUTH_TOKEN,
// the one secret backend and workers already share, under a label of its own so a token never
// doubles as the worker credential. Node only (node:crypto): not exported from the package index,
// which the console bundles.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const TEST_CALL_TOKEN_PREFIX = 'vt1';
/** Longest token a worker looks at: anything longer is refused before any hashing. */
const TEST_CALL_TOKEN_MAX_LENGTH = 1024;
/** Longest lifetime a worker accepts, whatever a token says (docs/design.md §4: at most 10 minutes). */
const TEST_CALL_TOKEN_MAX_TTL_SECONDS = 600;

interface TestCallClaims {
  /** The one bot this token may call. */
  bot_id: string;
  /** Expiry, unix seconds. */
  exp: number;
  /** Issued at, unix seconds. */
  iat: number;
  /** Unique id: a worker lets each token start one call. */
  jti: string;
  /** Who asked for it (`admin:<id>` or an API key's public prefix), for the call's log lines. */
  sub: string;
  /** A bot test's call (docs/design.md §17): the run and case, so the call gets that case's tool mocks. */
  test?: TestCallRef;
}

/** Which test run's case a test call is. */
export interface TestCallRef {
  run_id: string;
  case_id: string;
}

type TestCallTokenProblem = 'malformed' | 'bad_signature' | 'expired' | 'wrong_bot';

const b64url = (buf: Buffer): string => buf.toString('base64url');

function signingKey(workerAuthToken: string): Buffer {
  return createHmac('sha256', workerAuthToken).update('voice-platform test-call token v1').digest();
}

function mac(workerAuthToken: string, signed: string): Buffer {
  return createHmac('sha256', signingKey(workerAuthToken)).update(signed).digest();
}

export function signTestCallToken(
  workerAuthToken: string,
  claims: { bot_id: string; sub: string; ttlSeconds: number; nowMs?: number; test?: TestCallRef },
): { token: string; claims: TestCallClaims } {
  const iat = Math.floor((claims.nowMs ?? Date.now()) / 1000);
  const full: TestCallClaims = { bot_id: claims.bot_id, exp: iat + claims.ttlSeconds, iat, jti: b64url(randomBytes(16)), sub: claims.sub, ...(claims.test ? { test: { run_id: claims.test.run_id, case_id: claims.test.case_id } } : {}) };
  const signed = `${TEST_CALL_TOKEN_PREFIX}.${b64url(Buffer.from(JSON.stringify(full)))}`;
  return { token: `${signed}.${b64url(mac(workerAuthToken, signed))}`, claims: full };
}

/** The token's claims when it is genuine, unexpired and for `botId`; else the problem. */
export function verifyTestCallToken(
  workerAuthToken: string,
  token: string,
  botId: string,
  nowMs = Date.now(),
): { ok: true; claims: TestCallClaims } | { ok: false; problem: TestCallTokenProblem } {
  if (token.length > TEST_CALL_TOKEN_MAX_LENGTH) return { ok: false, problem: 'malformed' };
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== TEST_CALL_TOKEN_PREFIX || !/^[A-Za-z0-9_-]+$/.test(parts[1]!) || !/^[A-Za-z0-9_-]{43}$/.test(parts[2]!)) {
    return { ok: false, problem: 'malformed' };
  }
  const expected = mac(workerAuthToken, `${parts[0]}.${parts[1]}`);
  const given = Buffer.from(parts[2]!, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, problem: 'bad_signature' };
  let claims: TestCallClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as TestCallClaims;
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  if (
    typeof claims !== 'object' || claims === null || typeof claims.bot_id !== 'string' || typeof claims.jti !== 'string' ||
    typeof claims.sub !== 'string' || !Number.isInteger(claims.exp) || !Number.isInteger(claims.iat) ||
    (claims.test !== undefined && (typeof claims.test !== 'object' || claims.test === null || typeof claims.test.run_id !== 'string' || typeof claims.test.case_id !== 'string'))
  ) {
    return { ok: false, problem: 'malformed' };
  }
  const nowS = nowMs / 1000;
  // A signed token with a lifetime beyond the cap (another version's backend, a clock gone wrong) is expired.
  if (claims.exp <= nowS || claims.exp - claims.iat > TEST_CALL_TOKEN_MAX_TTL_SECONDS || claims.iat > nowS + 60) return { ok: false, problem: 'expired' };
  if (claims.bot_id !== botId) return { ok: false, problem: 'wrong_bot' };
  return { ok: true, claims };
}
