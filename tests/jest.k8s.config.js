// `make test-k8s`: the suite against the kind cluster of `make kind-up` (tests/k8s; docs/kind.md).
// Its steps build on each other and on one cluster: one file, in order, no global services.
import preset from '../jest.preset.js';

export default {
  ...preset,
  testMatch: ['<rootDir>/k8s/**/*.test.ts'],
  testTimeout: 600_000,
  maxWorkers: 1,
};
