import { jestGlobalTeardown } from '@voice-platform/tests/infra';

export default async function teardown() {
  await globalThis.__vpBackend?.stop();
  await jestGlobalTeardown();
}
