export { startTestEnv, type TestEnv } from './env.js';
export { jestGlobalSetup, jestGlobalTeardown } from './jest.js';
export { allServices, createService, FerretDB, Kube, MinIO, Redis, type Service, type ServiceName } from './services.js';
export { freePort, startProcess, waitUntil, type ManagedProcess } from './process.js';
export { binary, parseEnvFile, repoRoot, versions } from './versions.js';
export { LiveKit, Phone, PHONE_NUMBERS, AGENT_PHRASE, readRefers, type PhoneRefer, holdNumber, keypadNumber, listenNumber, LIVEKIT_DEV_KEY, LIVEKIT_DEV_SECRET, writeRtpPcap, speakUlaw, callInbound, type InboundCallResult } from './telephony.js';
export { keepLogs, logRoot, saveLogs } from './logs.js';
export { PhoneEar, ulawToLinear, type HeardStream } from './ear.js';
export { startCrm, verifySignature, type CrmOptions } from './crm.js';
