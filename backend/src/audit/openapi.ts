// The OpenAPI path of the audit log, built by openapi.ts with its helpers.
import type { TSchema } from '@sinclair/typebox';
import { AuditPage, CURSOR_PATTERN, RESOURCE_ID_PATTERN, type ErrorCode } from '@voice-platform/schemas';
import type { DocHelpers } from '../core/docHelpers.js';

type Helpers = Pick<DocHelpers, 'ok' | 'errors' | 'ADMIN' | 'timeParam'>;

export function auditPaths(h: Helpers): Record<string, object> {
  const text = { type: 'string', pattern: '^[A-Za-z0-9_.:+@-]{1,200}$' };
  return {
    '/api/v1/audit': {
      get: {
        operationId: 'listAuditEntries',
        summary: 'The audit log: every change made through the API, newest first, with cursor pagination (owner, admin)',
        description:
          'One entry per change: create, update, deactivate, delete, rotate, a campaign start/pause/resume/cancel, contacts and do-not-call ' +
          'numbers added, a password change, a login and a failed login (actor `user` with id null and the email tried as `label`). `changes` ' +
          'holds each changed field as [before, after]; secrets read "[redacted]". Append-only: no operation changes or deletes an entry. ' +
          'Each filter at most once and non-empty; an unknown query parameter is refused (422 `validation_failed` naming it).',
        security: [{ adminJwt: [] }],
        parameters: [
          { name: 'actor_id', in: 'query', schema: { type: 'string', pattern: RESOURCE_ID_PATTERN }, description: "The user's or API key's id" },
          { name: 'resource_type', in: 'query', schema: text, description: 'e.g. `bot`, `api_key`, `user`, `campaign`' },
          { name: 'resource_id', in: 'query', schema: text },
          { name: 'action', in: 'query', schema: text, description: 'e.g. `bot.update`' },
          { name: 'from', in: 'query', schema: h.timeParam, description: 'Entries at or after this time' },
          { name: 'to', in: 'query', schema: h.timeParam, description: 'Entries before this time' },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
          {
            name: 'cursor',
            in: 'query',
            schema: { type: 'string', pattern: CURSOR_PATTERN },
            description: '`next_cursor` of the previous page, with the same filters: `<at in ms>.<entry id>` of its last entry; the page starts after it',
          },
        ],
        responses: { 200: h.ok('A page of entries', AuditPage), ...h.errors([...h.ADMIN, 'validation_failed']) },
      },
    },
  };
}
