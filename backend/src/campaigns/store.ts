// Campaign and contact records, and the two writes both the API side and the dialler make: recording a
// dial on a contact and settling a contact when its call ends. FerretDB applies a conditional update as a
// read then a write (locks.ts), so every read-check-write of one contact or campaign holds its Redis lock.
import type { Db } from 'mongodb';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { TERMINAL_CALL_STATUSES } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';
import { withDocLock } from '../core/locks.js';
import type { CallDoc } from '../calls/store.js';
import { emitWebhookEvent, type WebhookEmitMetrics } from '../webhooks/outbox.js';
import { CONTACT_STATUSES, type Campaign, type CampaignDetail, type CampaignStatus, type CallingWindow, type Contact, type ContactStatus, type RetryOutcome } from '@voice-platform/schemas';

export interface CampaignDoc {
  _id: string;
  name: string;
  bot_id: string;
  from_number: string | null;
  /** Where national contact numbers are read (ISO 3166 alpha-2); null or absent (older campaigns): the caller ID's country. */
  default_region?: string | null;
  timezone: string;
  windows: CallingWindow[];
  max_concurrency: number;
  calls_per_second: number;
  retry: { max_attempts: number; delay_seconds: number; on: RetryOutcome[] };
  /** Over the bot's answering machine settings (absent on campaigns made before it existed). */
  answering_machine?: { detect?: boolean; on_machine?: 'hangup' | 'leave_message' } | null;
  status: CampaignStatus;
  paused_reason: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  canceled_at: Date | null;
}

/** A new campaign's lifecycle fields: a draft, never started, paused or ended. */
export function draftLifecycle(now: Date): Pick<CampaignDoc, 'status' | 'paused_reason' | 'created_at' | 'updated_at' | 'started_at' | 'completed_at' | 'canceled_at'> {
  return { status: 'draft', paused_reason: null, created_at: now, updated_at: now, started_at: null, completed_at: null, canceled_at: null };
}

export interface AttemptDoc {
  call_id: string;
  status: string;
  end_reason: string | null;
  at: Date;
}

export interface ContactDoc {
  _id: string;
  campaign_id: string;
  to_number: string;
  variables: Record<string, string>;
  timezone: string | null;
  status: ContactStatus;
  /** Absent when stored empty by a store that drops empty arrays; read as []. */
  attempts?: AttemptDoc[];
  /** The live attempt's call while `dialing`. */
  current_call_id: string | null;
  next_attempt_at: Date | null;
  /** When the dialler may dial it (pending: its creation; retry_scheduled: next_attempt_at); null otherwise. */
  due_at: Date | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export const campaigns = (db: Db) => db.collection<CampaignDoc>(COLLECTIONS.campaigns);
export const contacts = (db: Db) => db.collection<ContactDoc>(COLLECTIONS.campaignContacts);

/** Contacts that still need the dialler: the campaign is done when none is left. */
const OPEN_CONTACT_STATUSES: ContactStatus[] = ['pending', 'retry_scheduled', 'dialing'];
export const DIALABLE_CONTACT_STATUSES: ContactStatus[] = ['pending', 'retry_scheduled'];

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function publicCampaign(doc: CampaignDoc): Campaign {
  return {
    id: doc._id,
    name: doc.name,
    bot_id: doc.bot_id,
    from_number: doc.from_number,
    default_region: doc.default_region ?? null,
    timezone: doc.timezone,
    windows: doc.windows ?? [],
    max_concurrency: doc.max_concurrency,
    calls_per_second: doc.calls_per_second,
    retry: { ...doc.retry, on: doc.retry.on ?? [] },
    answering_machine: doc.answering_machine ?? null,
    status: doc.status,
    paused_reason: doc.paused_reason ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    started_at: iso(doc.started_at),
    completed_at: iso(doc.completed_at),
    canceled_at: iso(doc.canceled_at),
  };
}

async function contactCounts(db: Db, campaignId: string): Promise<Record<ContactStatus, number>> {
  const out = Object.fromEntries(CONTACT_STATUSES.map((s) => [s, 0])) as Record<ContactStatus, number>;
  const rows = await contacts(db)
    .aggregate<{ _id: ContactStatus; n: number }>([{ $match: { campaign_id: campaignId } }, { $group: { _id: '$status', n: { $sum: 1 } } }])
    .toArray();
  for (const r of rows) if (r._id in out) out[r._id] = r.n;
  return out;
}

export async function campaignDetail(db: Db, doc: CampaignDoc): Promise<CampaignDetail> {
  return { ...publicCampaign(doc), counts: await contactCounts(db, doc._id) };
}

export function publicContact(doc: ContactDoc): Contact {
  return {
    id: doc._id,
    campaign_id: doc.campaign_id,
    to_number: doc.to_number,
    variables: doc.variables ?? {},
    timezone: doc.timezone ?? null,
    status: doc.status,
    attempts: (doc.attempts ?? []).map((a) => ({ call_id: a.call_id, status: a.status, end_reason: a.end_reason, at: a.at.toISOString() })),
    next_attempt_at: iso(doc.next_attempt_at),
    error: doc.error ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

export interface CampaignDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  clock: () => number;
  metrics?: WebhookEmitMetrics;
}

const contactLock = (id: string) => `campaign-contact:${id}`;
export const campaignLock = (id: string) => `campaign:${id}`;

/**
 * Records that attempt `attempt` of a contact was placed as call `callId` (status `dialing`). Idempotent:
 * a dial already recorded (a replica that adopts a call another one placed) changes nothing.
 */
export async function recordDial(deps: CampaignDeps, contactId: string, callId: string, attempt: number, at: Date): Promise<void> {
  await withDocLock(deps.redis, contactLock(contactId), async () => {
    const c = await contacts(deps.db).findOne({ _id: contactId });
    if (!c) return;
    const attempts = c.attempts ?? [];
    if (attempts.some((a) => a.call_id === callId)) return;
    if (attempts.length !== attempt - 1) {
      deps.logger.warn({ contact_id: contactId, call_id: callId, attempt, recorded: attempts.length }, 'campaign dial out of order; recorded anyway');
    }
    await contacts(deps.db).updateOne(
      { _id: contactId },
      {
        $set: {
          status: 'dialing',
          current_call_id: callId,
          attempts: [...attempts, { call_id: callId, status: 'queued', end_reason: null, at }],
          next_attempt_at: null,
          due_at: null,
          updated_at: at,
        },
      },
    );
  });
}

/** Marks a contact that was not dialled (do-not-call, or its row no longer fits the bot), if it is still dialable. */
export async function closeUndialled(deps: CampaignDeps, contactId: string, status: 'skipped_dnc' | 'failed', error: string | null): Promise<boolean> {
  return withDocLock(deps.redis, contactLock(contactId), async () => {
    const c = await contacts(deps.db).findOne({ _id: contactId });
    if (!c || !DIALABLE_CONTACT_STATUSES.includes(c.status)) return false;
    await contacts(deps.db).updateOne({ _id: contactId }, { $set: { status, error, due_at: null, next_attempt_at: null, updated_at: new Date(deps.clock()) } });
    return true;
  });
}

/**
 * A campaign call ended (`call` is terminal): its attempt gets the outcome and the contact its next status:
 * `completed`; or, for an outcome the retry rule names (never `invalid_number`) with attempts left and the
 * campaign not canceled, `retry_scheduled` after `delay_seconds`; else the outcome (`busy`, `no_answer`,
 * `failed`). Idempotent; also adopts a call the contact does not know yet (its dialler died before
 * recording it). Called by the call lifecycle and, for a crash in between, by the dialler's reconcile.
 */
export async function settleContact(deps: CampaignDeps, call: CallDoc): Promise<void> {
  const contactId = call.campaign_contact_id;
  if (!contactId || !call.campaign_id || !TERMINAL_CALL_STATUSES.includes(call.status)) return;
  const campaign = await campaigns(deps.db).findOne({ _id: call.campaign_id });
  await withDocLock(deps.redis, contactLock(contactId), async () => {
    const c = await contacts(deps.db).findOne({ _id: contactId });
    if (!c) return;
    const attempts = [...(c.attempts ?? [])];
    let i = attempts.findIndex((a) => a.call_id === call._id);
    if (i < 0) {
      attempts.push({ call_id: call._id, status: 'queued', end_reason: null, at: call.created_at });
      i = attempts.length - 1;
    }
    const a = attempts[i]!;
    if (TERMINAL_CALL_STATUSES.includes(a.status as CallDoc['status'])) return; // settled already
    attempts[i] = { ...a, status: call.status, end_reason: call.end_reason };
    // Only the live attempt moves the contact on (an adopted older one only fills in its outcome).
    const live = c.status === 'dialing' ? c.current_call_id === call._id : i === attempts.length - 1 && c.status !== 'skipped_dnc';
    const now = new Date(deps.clock());
    const set: Partial<ContactDoc> = { attempts, updated_at: now };
    if (live) {
      const outcome: ContactStatus = call.status === 'completed' ? 'completed' : call.status === 'busy' ? 'busy' : call.status === 'no_answer' ? 'no_answer' : 'failed';
      // A machine took the call and the bot hung up: `completed`, unless the rule retries `voicemail`.
      const retriedAs: RetryOutcome | null = outcome !== 'completed' ? (outcome as RetryOutcome) : call.end_reason === 'voicemail' ? 'voicemail' : null;
      const retry = campaign?.retry;
      const retried =
        retriedAs !== null &&
        retry !== undefined &&
        (retry.on ?? []).includes(retriedAs) &&
        call.end_reason !== 'invalid_number' &&
        attempts.length < retry.max_attempts &&
        campaign?.status !== 'canceled' &&
        campaign?.status !== 'completed';
      set.current_call_id = null;
      if (retried) {
        const next = new Date(now.getTime() + retry!.delay_seconds * 1000);
        Object.assign(set, { status: 'retry_scheduled', next_attempt_at: next, due_at: next });
      } else {
        Object.assign(set, { status: outcome, next_attempt_at: null, due_at: null });
      }
    }
    await contacts(deps.db).updateOne({ _id: contactId }, { $set: set });
  });
}

/** Completes a running campaign that has no open contact left; emits `campaign.completed` once (under its lock). */
export async function completeIfDone(deps: CampaignDeps, campaignId: string): Promise<boolean> {
  if (await contacts(deps.db).findOne({ campaign_id: campaignId, status: { $in: OPEN_CONTACT_STATUSES } }, { projection: { _id: 1 } })) return false;
  return withDocLock(deps.redis, campaignLock(campaignId), async () => {
    const doc = await campaigns(deps.db).findOne({ _id: campaignId });
    if (doc?.status !== 'running') return false;
    // Re-checked under the lock: an upload (which holds it too) may have added contacts meanwhile.
    if (await contacts(deps.db).findOne({ campaign_id: campaignId, status: { $in: OPEN_CONTACT_STATUSES } }, { projection: { _id: 1 } })) return false;
    const now = new Date(deps.clock());
    await campaigns(deps.db).updateOne({ _id: campaignId, status: 'running' }, { $set: { status: 'completed', completed_at: now, updated_at: now } });
    const done: CampaignDoc = { ...doc, status: 'completed', completed_at: now, updated_at: now };
    await emitWebhookEvent(deps, 'campaign.completed', await campaignDetail(deps.db, done));
    deps.logger.info({ campaign_id: campaignId }, 'campaign completed');
    return true;
  });
}
