// The shared JSON Schemas (TypeBox). Formats are in formats.ts; each area has its own file.
import { Type, type Static } from '@sinclair/typebox';
import { PHONE_NUMBER_PATTERN } from './formats.js';

export { API_KEY_PATTERN, CURSOR_PATTERN, PHONE_NUMBER_PATTERN, RESOURCE_ID_PATTERN } from './formats.js';

const PhoneNumber = Type.String({ pattern: PHONE_NUMBER_PATTERN, description: 'E.164 phone number' });
type PhoneNumber = Static<typeof PhoneNumber>;

export * from './bot.js';
export * from './flow.js';
export * from './dialout.js';
export * from './calls.js';
export * from './config.js';
export * from './knowledge.js';
export * from './fleet.js';
export * from './job.js';
export * from './fleetStatus.js';
export * from './apiKeys.js';
export * from './voicefleet.js';
export * from './settings.js';
export * from './trunks.js';
export * from './templates.js';
export * from './logs.js';
export * from './webhooks.js';
export * from './inbound.js';
export * from './campaigns.js';
export * from './errors.js';
export * from './intents.js';
export * from './users.js';
export * from './phone.js';
export * from './analytics.js';
export * from './audit.js';
export * from './csv.js';
export * from './redact.js';
export * from './botTests.js';
