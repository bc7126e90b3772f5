// The suite's backend made ready for the SDK's tests (not part of the published package): the admin signed in,
// a trunk to dial through, and a live worker's heartbeat, written as a worker writes it, so dial-outs are queued
// (nothing claims them).
import { Redis } from 'ioredis';
import { FLEET_WORKERS_KEY, fleetWorkerKey, type WorkerHeartbeat } from '@voice-platform/schemas';

export const baseUrl = (): string => process.env.VP_BACKEND_URL!;

export interface SuiteBackend {
  /** The admin's access token. */
  token: string;
  /** An admin request; a non-2xx answer throws with its body. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export async function suiteBackend(workerId: string): Promise<SuiteBackend> {
  const login = await fetch(`${baseUrl()}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: process.env.VP_ADMIN_EMAIL, password: process.env.VP_ADMIN_PASSWORD }),
  });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const admin = async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const trunks = await admin<{ items: unknown[] }>('GET', '/api/v1/sip/outbound-trunks');
  if (trunks.items.length === 0) await admin('POST', '/api/v1/sip/outbound-trunks', { name: 'carrier', address: 'sip.example.com', numbers: ['+15550001000'] });
  const redis = new Redis(process.env.REDIS_URL!);
  const hb: WorkerHeartbeat = { worker_id: workerId, active_calls: 0, max_calls: 1000, draining: false, version: 'test', updated_at: Date.now() };
  await redis.set(fleetWorkerKey(hb.worker_id), JSON.stringify(hb), 'PX', 3_600_000);
  await redis.zadd(FLEET_WORKERS_KEY, Date.now() + 3_600_000, hb.worker_id);
  return { token, admin, close: async () => void (await redis.quit()) };
}
