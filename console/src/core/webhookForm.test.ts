// The webhook form: bodies for create and update (only what changed), the shared URL rule, and the
// deliveries log in words.
import type { Webhook, WebhookDeliveryAttempt } from '@voice-platform/schemas/webhooks.js';
import { attemptSummary, emptyWebhookForm, webhookCreateBody, webhookToForm, webhookUpdateBody } from './webhookForm.js';

const stored: Webhook = {
  id: 'w1',
  url: 'https://crm.example.com/hooks/voice',
  events: ['call.ended', 'call.queued'],
  description: 'CRM',
  active: true,
  include_transcript: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

const attempt = (patch: Partial<WebhookDeliveryAttempt>): WebhookDeliveryAttempt => ({
  id: 'a1',
  event_id: 'e1',
  type: 'call.ended',
  attempt: 1,
  status: 'delivered',
  status_code: 200,
  error: null,
  duration_ms: 42,
  attempted_at: '2026-01-01T00:00:00.000Z',
  next_attempt_at: null,
  delivered_at: '2026-01-01T00:00:00.000Z',
  ...patch,
});

describe('webhook form', () => {
  it('starts with call.ended ticked and builds the create body in the documented event order', () => {
    expect(emptyWebhookForm()).toEqual({ url: '', events: ['call.ended'], description: '', include_transcript: false });
    const { body, errors } = webhookCreateBody({ url: ' https://crm.example.com/h ', events: ['call.ended', 'call.queued'], description: '  ', include_transcript: false });
    expect(errors).toEqual({});
    expect(body).toEqual({ url: 'https://crm.example.com/h', events: ['call.queued', 'call.ended'] });
    const analyzed = webhookCreateBody({ url: 'https://crm.example.com/h', events: ['call.analyzed', 'call.ended'], description: '', include_transcript: true });
    expect(analyzed.body).toEqual({ url: 'https://crm.example.com/h', events: ['call.ended', 'call.analyzed'], include_transcript: true });
  });

  it('names each bad field: no URL, a URL with credentials or another scheme, no event, a long description', () => {
    expect(webhookCreateBody({ url: '', events: [], description: '', include_transcript: false }).errors).toEqual({ url: 'Enter the URL that receives the events.', events: 'Choose at least one event.' });
    for (const url of ['ftp://crm.example.com/h', 'https://user:pw@crm.example.com/h', 'crm.example.com/h', 'https://']) {
      expect(webhookCreateBody({ url, events: ['call.ended'], description: '', include_transcript: false }).errors).toEqual({
        url: 'Must be an http:// or https:// URL without a user name or password, e.g. https://crm.example.com/hooks/voice.',
      });
    }
    expect(webhookCreateBody({ url: 'https://a.example', events: ['call.ended'], description: 'x'.repeat(501), include_transcript: false }).errors).toEqual({ description: 'At most 500 characters.' });
  });

  it('sends only what changed on an edit; clearing the description sends null', () => {
    expect(webhookUpdateBody(stored, webhookToForm(stored)).body).toEqual({});
    expect(webhookUpdateBody(stored, { ...webhookToForm(stored), events: ['call.queued', 'call.ended'] }).body).toEqual({});
    expect(webhookUpdateBody(stored, { url: 'https://crm.example.com/v2', events: ['call.ended'], description: '', include_transcript: false }).body).toEqual({
      url: 'https://crm.example.com/v2',
      events: ['call.ended'],
      description: null,
    });
    expect(webhookUpdateBody(stored, { ...webhookToForm(stored), include_transcript: true }).body).toEqual({ include_transcript: true });
    expect(webhookUpdateBody({ ...stored, include_transcript: true }, { ...webhookToForm(stored), include_transcript: false }).body).toEqual({ include_transcript: false });
  });

  it('reads each attempt of the deliveries log in words', () => {
    expect(attemptSummary(attempt({}))).toBe('Delivered (HTTP 200, 42 ms)');
    expect(attemptSummary(attempt({ status: 'dead', attempt: 8, status_code: 500, error: 'the receiver answered 500' }))).toBe('Gave up after attempt 8 (HTTP 500: the receiver answered 500)');
    expect(attemptSummary(attempt({ status: 'failed', status_code: null, error: 'timed out after 10 s', next_attempt_at: null }))).toBe('Failed (no answer: timed out after 10 s); retrying');
  });
});
