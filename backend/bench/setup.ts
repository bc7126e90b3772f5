// Bench fixtures through the public API: an admin login, an API key, a bot, a call; and a worker
// heartbeat with room for every call the run places.
import type { Redis } from 'ioredis';
import { FLEET_WORKERS_KEY, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TTL_MS, fleetWorkerKey } from '@voice-platform/schemas';

async function call(url: string, init: RequestInit & { json?: unknown }): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    ...init,
    headers: { ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export async function loginAndSetup(base: string, workerToken: string): Promise<{ apiKey: string; botId: string; callId: string }> {
  const login = await call(`${base}/api/v1/auth/login`, { method: 'POST', json: { email: 'bench@example.com', password: 'bench-password' } });
  const admin = { Authorization: `Bearer ${login.access_token as string}` };
  const key = await call(`${base}/api/v1/api-keys`, { method: 'POST', headers: admin, json: { name: 'bench' } });
  const bot = await call(`${base}/api/v1/bots`, {
    method: 'POST',
    headers: admin,
    json: {
      name: 'bench',
      prompt: 'Remind {{customer_name}}.',
      greeting: 'Hello {{customer_name}}',
      variables: [{ name: 'customer_name', required: true }],
    },
  });
  // A trunk to nowhere in particular: the bench measures the API, no worker dials these calls.
  await call(`${base}/api/v1/sip/outbound-trunks`, {
    method: 'POST',
    headers: admin,
    json: { name: 'bench', address: '127.0.0.1:5999', numbers: ['+15550100000'] },
  });
  const c = await call(`${base}/api/v1/calls`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${workerToken}` },
    json: { bot_id: bot.id, direction: 'websocket', variables: { customer_name: 'Ada' } },
  });
  return { apiKey: key.key as string, botId: bot.id as string, callId: c.call_id as string };
}

export function heartbeatForBench(redis: Redis): () => void {
  const beat = async () => {
    const hb = { worker_id: 'bench', active_calls: 0, max_calls: 1_000_000_000, draining: false, version: 'bench', updated_at: Date.now() };
    await redis.set(fleetWorkerKey('bench'), JSON.stringify(hb), 'PX', HEARTBEAT_TTL_MS);
    await redis.zadd(FLEET_WORKERS_KEY, Date.now() + HEARTBEAT_TTL_MS, 'bench');
  };
  void beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_INTERVAL_MS);
  return () => clearInterval(timer);
}
