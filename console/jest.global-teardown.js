import { jestGlobalTeardown } from '@voice-platform/tests/infra';

export default async function teardown() {
  for (const proc of [...(globalThis.__vpProcs ?? [])].reverse()) await proc.stop();
  await jestGlobalTeardown();
}
