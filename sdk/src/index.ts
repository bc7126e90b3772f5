// @voice-platform/sdk: the API's client (createClient), its errors and webhook verification.
export { createClient, parseRetryAfter, TERMINAL_CALL_STATUSES, type Client, type ClientOptions, type DialoutOptions, type WaitOptions } from './client.js';
export { ApiError, WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
export { verifyWebhook, DEFAULT_WEBHOOK_TOLERANCE_SECONDS, type VerifyOptions, type WebhookHeaders } from './webhooks.js';
export type * from './types.js';
export type { paths, operations, components, webhooks } from './schema.gen.js';
