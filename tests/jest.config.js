import preset from '../jest.preset.js';

export default {
  ...preset,
  testMatch: ['<rootDir>/services/**/*.test.ts', '<rootDir>/infra/src/**/*.test.ts'],
  globalSetup: '<rootDir>/jest.global-setup.js',
  globalTeardown: '<rootDir>/jest.global-teardown.js',
  testTimeout: 60_000,
};
