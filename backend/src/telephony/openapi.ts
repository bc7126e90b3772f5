// The OpenAPI path of LiveKit's webhook (inbound calls), built by openapi.ts with its helpers.
import type { ErrorCode } from '@voice-platform/schemas';

interface DocHelpers {
  errors: (codes: readonly ErrorCode[], notes?: Partial<Record<ErrorCode, string>>) => Record<string, object>;
}

export function liveKitWebhookPaths(h: DocHelpers): Record<string, object> {
  return {
    '/livekit/webhook': {
      post: {
        operationId: 'liveKitWebhook',
        summary: 'LiveKit: room and participant events (inbound calls)',
        description:
          'For livekit-server only (its `webhook.urls`): each request is signed with the LiveKit API key (a JWT in `Authorization` whose ' +
          '`sha256` claim is the body\'s hash); anything else is 401 `unauthorized`. A SIP caller joining a room of an inbound number\'s ' +
          'dispatch rule (`in-…`) becomes a call (`direction: inbound`) queued for the fleet; at capacity (or for an inactive bot) the ' +
          'room is deleted while the phone rings, so the caller hears 486 Busy Here, and the call is recorded `failed` ' +
          '(`fleet_at_capacity`). Other events are acknowledged and ignored. 503 `service_unavailable` when the telephony plane is not configured.',
        security: [{ liveKitWebhook: [] }],
        requestBody: { required: true, content: { 'application/webhook+json': { schema: { type: 'object', description: 'a LiveKit WebhookEvent' } } } },
        responses: {
          204: { description: 'Received' },
          ...h.errors(['unauthorized', 'payload_too_large', 'service_unavailable'], { service_unavailable: 'The telephony plane is not configured, or MongoDB or Redis is unreachable' }),
        },
      },
    },
  };
}
