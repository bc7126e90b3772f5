import { fileURLToPath } from 'node:url';
import preset from '../jest.preset.js';

const root = fileURLToPath(new URL('..', import.meta.url));

export default {
  ...preset,
  moduleNameMapper: {
    // The console imports single schema files (a lean bundle); tests resolve them to the sources too.
    '^@voice-platform/schemas/(.*)\\.js$': `${root}schemas/src/$1.ts`,
    ...preset.moduleNameMapper,
  },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/e2e/**/*.test.ts'],
  globalSetup: '<rootDir>/jest.global-setup.js',
  globalTeardown: '<rootDir>/jest.global-teardown.js',
  testTimeout: 120_000,
  // The browser suites share one backend and its trunks (trunks.test.ts starts from none, console.test.ts
  // adds one for its dial-outs): one test file at a time (what jest does on a 2-core machine anyway).
  maxWorkers: 1,
};
