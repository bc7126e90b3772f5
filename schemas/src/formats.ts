// Formats shared by every part. Each pattern is written once here and reused by the backend's request
// validation, the worker's config checks and the CRDs' openAPIV3Schema.

/** E.164: a leading `+`, a non-zero digit, 7 to 15 digits in all. */
export const PHONE_NUMBER_PATTERN = '^\\+[1-9][0-9]{6,14}$';
/** API key: `vx_` and 32 characters of [A-Za-z0-9]. */
export const API_KEY_PATTERN = '^vx_[A-Za-z0-9]{32}$';
/** Ids of stored resources (bots, calls, API keys, trunks): what the backend makes (24 hex digits, or a
 *  seeded name such as `demo-bot`) and the only ids it looks up; anything else is no id of ours. */
export const RESOURCE_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';
/** A list cursor (`next_cursor` of the previous page): `<created_at in ms since 1970>.<id>` of the last item
 *  of that page; the next page starts after it. Any text of this shape names a position, so any is accepted. */
export const CURSOR_PATTERN = '^(?:0|[1-9][0-9]{0,14})\\.[A-Za-z0-9_-]{1,128}$';
