// Shared jest settings: TypeScript ESM sources transformed by swc (type checking is `tsc -b`).
// Workspace packages resolve to their TypeScript sources so tests never need a prior build.
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }],
  },
  moduleNameMapper: {
    '^@voice-platform/schemas$': `${root}schemas/src/index.ts`,
    '^@voice-platform/schemas/test-call-token$': `${root}schemas/src/testCallToken.ts`,
    '^@voice-platform/schemas/node$': `${root}schemas/src/node/index.ts`,
    '^@voice-platform/sdk$': `${root}sdk/src/index.ts`,
    '^@voice-platform/tests/infra$': `${root}tests/infra/src/index.ts`,
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
