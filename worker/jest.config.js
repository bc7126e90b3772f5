import preset from '../jest.preset.js';

export default {
  ...preset,
  // The harness (testing/) and benches reach the worker as `#worker/…` (package.json "imports": the build in
  // dist/ when they run as programs); under jest that is the sources, the same modules the tests import.
  moduleNameMapper: { '^#worker/(.*)\\.js$': '<rootDir>/src/$1.ts', ...preset.moduleNameMapper },
  globalSetup: '<rootDir>/jest.global-setup.js',
  globalTeardown: '<rootDir>/jest.global-teardown.js',
  testTimeout: 90_000,
};
