// Webhooks as stored: the webhook (its signing secret sealed, see secretBox.ts: the deliverer must be able
// to sign with it), one delivery per event and webhook (its state and exact body), and the attempts log.
import type { Db } from 'mongodb';
import type { Webhook, WebhookAttemptResult, WebhookDeliveredType, WebhookDeliveryAttempt, WebhookEventType } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import { SecretBox } from '../core/secretBox.js';
import { randomAlphanumeric } from '../apiKeys/keys.js';

export interface WebhookDoc {
  _id: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  /** AES-GCM box of the `whsec_…` secret. */
  secret_sealed: string;
  active: boolean;
  /** call.ended and call.analyzed carry the transcript (absent on webhooks made before: false). */
  include_transcript?: boolean;
  created_at: Date;
  updated_at: Date;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

export interface DeliveryDoc {
  /** `<event id>_<webhook id>`: fanning one event out twice (a crashed deliverer's entry reclaimed) makes no second delivery. */
  _id: string;
  webhook_id: string;
  event_id: string;
  type: WebhookDeliveredType;
  /** The exact JSON sent on every attempt (the signature covers these bytes). */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  /** Due time of the next attempt while pending; null once delivered or dead. */
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptDoc {
  _id: string;
  webhook_id: string;
  delivery_id: string;
  event_id: string;
  type: WebhookDeliveredType;
  attempt: number;
  status: WebhookAttemptResult;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
}

export const webhooks = (db: Db) => db.collection<WebhookDoc>(COLLECTIONS.webhooks);
export const deliveries = (db: Db) => db.collection<DeliveryDoc>(COLLECTIONS.webhookDeliveries);
export const attempts = (db: Db) => db.collection<AttemptDoc>(COLLECTIONS.webhookAttempts);

export function webhookSecretBox(jwtSecret: string): SecretBox {
  return new SecretBox(jwtSecret, 'webhook-signing-secrets');
}

/** `whsec_` + 32 characters of [A-Za-z0-9], unbiased (WEBHOOK_SECRET_PATTERN). */
export const generateWebhookSecret = () => 'whsec_' + randomAlphanumeric(32);

export function publicWebhook(doc: WebhookDoc): Webhook {
  return {
    id: doc._id,
    url: doc.url,
    events: doc.events,
    description: doc.description,
    active: doc.active,
    include_transcript: doc.include_transcript ?? false,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function publicAttempt(doc: AttemptDoc): WebhookDeliveryAttempt {
  return {
    id: doc._id,
    event_id: doc.event_id,
    type: doc.type,
    attempt: doc.attempt,
    status: doc.status,
    status_code: doc.status_code,
    error: doc.error,
    duration_ms: doc.duration_ms,
    attempted_at: doc.attempted_at.toISOString(),
    next_attempt_at: iso(doc.next_attempt_at),
    delivered_at: iso(doc.delivered_at),
  };
}
