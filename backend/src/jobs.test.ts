// The call-job stream's rename (vp:jobs:dialout → vp:jobs:calls): at boot the backend moves the jobs no
// worker has read yet to the new stream, exactly once however many replicas boot at once, and leaves the
// jobs an old worker holds where they are.
import { Redis } from 'ioredis';
import { startTestEnv, type TestEnv } from '@voice-platform/tests/infra';
import { CALL_JOBS_CONSUMER_GROUP, CALL_JOBS_STREAM_KEY, streamEntries } from '@voice-platform/schemas';
import { LEGACY_JOBS_STREAM_KEY, migrateLegacyJobs } from './stores.js';

let env: TestEnv;
let redis: Redis;
beforeAll(async () => {
  env = await startTestEnv(['redis']);
  redis = new Redis(env.env.REDIS_URL!);
});
afterAll(async () => {
  redis.disconnect();
  await env.stop();
});

it('moves the unread jobs of the old stream once, keeps the ones an old worker holds, and does nothing without one', async () => {
  expect(await migrateLegacyJobs(redis)).toBe(0);
  await redis.xgroup('CREATE', LEGACY_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, '$', 'MKSTREAM');
  await redis.xgroup('CREATE', CALL_JOBS_STREAM_KEY, CALL_JOBS_CONSUMER_GROUP, '$', 'MKSTREAM');
  for (const id of ['c1', 'c2', 'c3', 'c4']) await redis.xadd(LEGACY_JOBS_STREAM_KEY, '*', 'call_id', id, 'bot_id', 'b', 'to_number', '+15005550100');
  // An old worker read the first job and runs it.
  await redis.xreadgroup('GROUP', CALL_JOBS_CONSUMER_GROUP, 'old-worker', 'COUNT', 1, 'STREAMS', LEGACY_JOBS_STREAM_KEY, '>');
  // Two replicas boot at once.
  const other = new Redis(env.env.REDIS_URL!);
  const moved = await Promise.all([migrateLegacyJobs(other), migrateLegacyJobs(redis)]);
  other.disconnect();
  expect(moved[0] + moved[1]).toBe(3);
  const now = (await redis.xrange(CALL_JOBS_STREAM_KEY, '-', '+')).map(([, f]) => f);
  expect(now).toEqual(['c2', 'c3', 'c4'].map((id) => ['call_id', id, 'bot_id', 'b', 'to_number', '+15005550100']));
  expect((await redis.xrange(LEGACY_JOBS_STREAM_KEY, '-', '+')).map(([, f]) => f[1])).toEqual(['c1']);
  // A new worker reads them from the new stream's group.
  const read = streamEntries(await redis.xreadgroup('GROUP', CALL_JOBS_CONSUMER_GROUP, 'new-worker', 'COUNT', 10, 'STREAMS', CALL_JOBS_STREAM_KEY, '>'));
  expect(read.map(([, f]) => f?.[1])).toEqual(['c2', 'c3', 'c4']);
  expect(await migrateLegacyJobs(redis)).toBe(0);
});
