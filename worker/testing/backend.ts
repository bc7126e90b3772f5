// The real backend of the suite (started by jest.global-setup.js): admin login, bots, calls. Dial-outs and
// call reads go through the SDK (@voice-platform/sdk), as an integrator's code would.
import type { BotCreate, Call } from '@voice-platform/schemas';
import { ApiError, createClient, type Client } from '@voice-platform/sdk';

export const backendUrl = (): string => process.env.VP_BACKEND_URL!;
export const workerToken = (): string => process.env.VP_WORKER_TOKEN!;

let token: Promise<string> | null = null;
export function adminAuth(): Promise<string> {
  token ??= (async () => {
    const res = await fetch(`${backendUrl()}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: process.env.VP_ADMIN_EMAIL, password: process.env.VP_ADMIN_PASSWORD }),
    });
    if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
    return `Bearer ${((await res.json()) as { access_token: string }).access_token}`;
  })();
  return token;
}

export async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${backendUrl()}${path}`, {
    method,
    headers: { Authorization: await adminAuth(), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

export async function createBot(bot: Partial<BotCreate> & { name?: string }): Promise<string> {
  const res = await admin('POST', '/api/v1/bots', { name: 'worker test bot', ...bot });
  if (res.status !== 201) throw new Error(`bot create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

export async function updateBot(id: string, patch: Partial<BotCreate>): Promise<void> {
  const res = await admin('PATCH', `/api/v1/bots/${id}`, patch);
  if (res.status !== 200) throw new Error(`bot update failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** The SDK's client signed in as the suite's admin (reads every call). */
async function adminClient(): Promise<Client> {
  return createClient({ baseUrl: backendUrl(), token: await adminAuth() });
}

/** An ApiError's status and body, as the tests' messages showed them before the SDK. */
const refusal = (err: ApiError) => `${err.status} ${JSON.stringify({ error: { code: err.code, message: err.message, details: err.details ?? undefined } })}`;

export async function getCall(id: string): Promise<Call> {
  try {
    // The SDK's Call is the document's (generated from the OpenAPI file the same schema makes).
    return (await (await adminClient()).calls.get(id)) as Call;
  } catch (err) {
    throw err instanceof ApiError ? new Error(`call read failed: ${refusal(err)}`, { cause: err }) : err;
  }
}

/** A key with every scope (dial-outs, calls, test calls, campaigns): the worker tests use one key for all of them. */
export async function createApiKey(): Promise<string> {
  const res = await admin('POST', '/api/v1/api-keys', { name: 'worker tests', scopes: ['dialout', 'calls:read', 'test_calls', 'campaigns'] });
  if (res.status !== 201) throw new Error(`key create failed: ${res.status}`);
  return res.body.key as string;
}

/** A dial-out through the SDK with `apiKey` (an Idempotency-Key of its own, retried on 429/503): the call's id (a refusal throws). */
export async function dialOut(apiKey: string, botId: string, to: string, variables: Record<string, string> = { customer_name: 'Sam' }): Promise<string> {
  try {
    return (await createClient({ baseUrl: backendUrl(), apiKey }).dialout({ bot_id: botId, to_number: to, variables })).call_id;
  } catch (err) {
    throw err instanceof ApiError ? new Error(`dial-out: ${refusal(err)}`, { cause: err }) : err;
  }
}

/** Polls the call record until `check` holds. */
export async function callUntil(id: string, check: (c: Call) => boolean, what: string, timeoutMs = 30_000): Promise<Call> {
  const deadline = Date.now() + timeoutMs;
  let last: Call | null = null;
  while (Date.now() < deadline) {
    last = await getCall(id);
    if (check(last)) return last;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`call ${id}: timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

/** The policy the tests talk to: phrases espeak-ng says and pocketsphinx hears reliably. */
export const TEST_POLICY = {
  intents: [
    { name: 'amount', examples: ['how much', 'what amount'], reply: 'The open amount is {{amount_due}} dollars.' },
    { name: 'stop', examples: ['stop calling', 'goodbye'], reply: 'Understood. Goodbye {{customer_name}}.', end_call: true },
  ],
  fallback: { reply: 'Sorry, I did not catch that.' },
};

/** The variables of the suite's reminder bots: the caller's name, and the amount the policy quotes. */
export const TEST_VARIABLES = [
  { name: 'customer_name', required: true, description: '' },
  { name: 'amount_due', required: false, description: '' },
];

/**
 * A bot that talks TEST_POLICY with TEST_VARIABLES (silent, 500 ms end of turn unless `bot` says
 * otherwise): the bot most worker tests call.
 */
export function createPolicyBot(bot: Partial<BotCreate> & { name: string }): Promise<string> {
  return createBot({ greeting: '', variables: TEST_VARIABLES, policy: TEST_POLICY, turn_detection: { end_of_turn_silence_ms: 500 }, ...bot });
}

/** The phone's trunk's caller ID (tests/infra Phone). */
export const TRUNK_NUMBER = '+15550001111';
let trunk: Promise<string> | null = null;
/** One outbound trunk to the suite's test phone (sipp), created once: dial-outs need a trunk. */
export function ensureTrunk(): Promise<string> {
  trunk ??= (async () => {
    const list = await admin('GET', '/api/v1/sip/outbound-trunks');
    const found = (list.body?.items as Array<{ id: string; numbers: string[] }> | undefined)?.find((t) => t.numbers.includes(TRUNK_NUMBER));
    if (found) return found.id;
    const res = await admin('POST', '/api/v1/sip/outbound-trunks', { name: 'test phone', address: process.env.SIP_PHONE_ADDRESS, numbers: [TRUNK_NUMBER] });
    if (res.status !== 201) throw new Error(`trunk create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  })();
  return trunk;
}
