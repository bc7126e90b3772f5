export { jestGlobalTeardown as default } from '@voice-platform/tests/infra';
