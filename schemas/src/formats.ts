// Formats shared by every part. Each pattern is written once here and reused by the backend's request
// validation, the worker's config checks and the CRDs' openAPIV3Schema.

/** E.164: a leading `+`, a non-zero digit, 7 to 15 digits in all. */
export const PHONE_NUMBER_PATTERN = '^\\+[1-9][0-9]{6,14}$';
/** API key: `vx_` and 32 characters of [A-Za-z0-9]. */
export const API_KEY_PATTERN = '^vx_[A-Za-z0-9]{32}$';
