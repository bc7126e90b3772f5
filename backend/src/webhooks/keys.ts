// Redis keys of the webhook outbox and deliverer (one Redis per deployment, as for the dial-out stream).

/** The outbox: one stream entry per event (`id`, `type`, `body`, optional `webhook_id` for a test event). */
export const WEBHOOK_EVENTS_STREAM = 'vp:webhooks:events';
/** The dialler role's deliverers share this consumer group: each entry is fanned out by one of them. */
export const WEBHOOK_CONSUMER_GROUP = 'deliverers';
/** Bound of the outbox while no dialler drains it (oldest events dropped beyond it; XADD MAXLEN ~). */
export const OUTBOX_MAX_EVENTS = 100_000;
/** call.ended events held for the recording (member call id, score the time the call ended). */
export const ENDED_PENDING_KEY = 'vp:webhooks:ended-pending';
/** Lease of one delivery: only its holder sends the next attempt (SET NX PX). */
export const deliveryLeaseKey = (deliveryId: string) => `vp:webhooks:lease:${deliveryId}`;
