// The webhook form's state ↔ the API bodies, checked with the shared rules (the URL pattern and the
// event list the backend validates with); and how a delivery attempt reads in the log.
import { WEBHOOK_EVENT_TYPES, WEBHOOK_URL_PATTERN, type Webhook, type WebhookCreate, type WebhookDeliveryAttempt, type WebhookEventType, type WebhookUpdate } from '@voice-platform/schemas/webhooks.js';
import type { FieldErrors } from './validation.js';

export interface WebhookForm {
  url: string;
  events: WebhookEventType[];
  description: string;
  /** call.ended and call.analyzed carry the call's transcript. */
  include_transcript: boolean;
}

/** What each event means, for the checkboxes. */
export const EVENT_LABELS: Record<WebhookEventType, string> = {
  'call.queued': 'Call queued',
  'call.ringing': 'Call ringing',
  'call.in_progress': 'Call answered',
  'call.ended': 'Call ended (with its outcome and recording)',
  'call.analyzed': "Call analyzed (the bot's post-call analysis: summary, fields, success)",
  'campaign.started': 'Campaign started',
  'campaign.completed': 'Campaign completed',
  'test_run.completed': "Bot test run completed (each case's result)",
};

/** A new webhook gets the event most receivers want. */
export const emptyWebhookForm = (): WebhookForm => ({ url: '', events: ['call.ended'], description: '', include_transcript: false });

export const webhookToForm = (w: Webhook): WebhookForm => ({ url: w.url, events: [...w.events], description: w.description ?? '', include_transcript: w.include_transcript });

const urlRe = new RegExp(WEBHOOK_URL_PATTERN);
const DESCRIPTION_MAX = 500;

function check(form: WebhookForm): FieldErrors {
  const errors: FieldErrors = {};
  const url = form.url.trim();
  if (!url) errors.url = 'Enter the URL that receives the events.';
  else if (!urlRe.test(url) || url.length > 2048) errors.url = 'Must be an http:// or https:// URL without a user name or password, e.g. https://crm.example.com/hooks/voice.';
  if (!form.events.length) errors.events = 'Choose at least one event.';
  if (form.description.length > DESCRIPTION_MAX) errors.description = `At most ${DESCRIPTION_MAX} characters.`;
  return errors;
}

/** In the order of WEBHOOK_EVENT_TYPES, whatever order they were ticked in. */
const ordered = (events: WebhookEventType[]) => WEBHOOK_EVENT_TYPES.filter((t) => events.includes(t));

export function webhookCreateBody(form: WebhookForm): { body: WebhookCreate; errors: FieldErrors } {
  const description = form.description.trim();
  return {
    body: { url: form.url.trim(), events: ordered(form.events), ...(description ? { description } : {}), ...(form.include_transcript ? { include_transcript: true } : {}) },
    errors: check(form),
  };
}

/** Only what changed (an empty body: nothing to send). */
export function webhookUpdateBody(stored: Webhook, form: WebhookForm): { body: WebhookUpdate; errors: FieldErrors } {
  const body: WebhookUpdate = {};
  const url = form.url.trim();
  if (url !== stored.url) body.url = url;
  const events = ordered(form.events);
  if (events.join() !== ordered(stored.events).join()) body.events = events;
  const description = form.description.trim();
  if (description !== (stored.description ?? '')) body.description = description || null;
  if (form.include_transcript !== stored.include_transcript) body.include_transcript = form.include_transcript;
  return { body, errors: check(form) };
}

/** One line of the deliveries log: what happened, in words. */
export function attemptSummary(a: WebhookDeliveryAttempt): string {
  const code = a.status_code !== null ? `HTTP ${a.status_code}` : 'no answer';
  if (a.status === 'delivered') return `Delivered (${code}, ${a.duration_ms} ms)`;
  const why = a.error ? `: ${a.error}` : '';
  if (a.status === 'dead') return `Gave up after attempt ${a.attempt} (${code}${why})`;
  return `Failed (${code}${why}); retrying${a.next_attempt_at ? ` at ${new Date(a.next_attempt_at).toLocaleString()}` : ''}`;
}
