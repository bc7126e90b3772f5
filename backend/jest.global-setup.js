import { jestGlobalSetup } from '@voice-platform/tests/infra';

export default jestGlobalSetup(['mongodb', 'redis', 'livekit']);
