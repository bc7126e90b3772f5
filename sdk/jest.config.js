import preset from '../jest.preset.js';

export default {
  ...preset,
  globalSetup: '<rootDir>/jest.global-setup.js',
  globalTeardown: '<rootDir>/jest.global-teardown.js',
  testTimeout: 60_000,
};
