// The new-campaign form's state (text as typed) → the create body, checked with the shared CampaignCreate
// schema (the backend validates with the same one) and the two rules the schema cannot hold (a time zone
// this browser knows, windows that end after they start); API refusals on their fields; and how a
// campaign reads: its progress, its counts by outcome, and which actions its status allows.
import {
  CONTACT_STATUSES,
  RETRY_OUTCOMES,
  WEEKDAYS,
  type CampaignCreate,
  type CampaignStatus,
  type ContactStatus,
  type RetryOutcome,
  type Weekday,
} from '@voice-platform/schemas/campaigns.js';
import { BOT_DEFAULTS, type AnsweringMachine } from '@voice-platform/schemas/bot.js';
import { isPhoneRegion } from '@voice-platform/schemas/phone.js';
import { ON_MACHINE_LABELS, type OnMachine } from './botForm.js';
import { parseNumber } from './inboundForm.js';
import { validateCampaignCreate, type FieldErrors } from './validation.js';

export interface WindowForm {
  days: Weekday[];
  start: string;
  end: string;
}

export interface CampaignForm {
  name: string;
  bot_id: string;
  /** Empty: the default trunk's caller ID. */
  from_number: string;
  /** ISO 3166 alpha-2 region national contact numbers are read in. Empty: the caller ID's country. */
  default_region: string;
  timezone: string;
  /** None: contacts may be called at any time. */
  windows: WindowForm[];
  max_concurrency: string;
  calls_per_second: string;
  max_attempts: string;
  delay_seconds: string;
  retry_on: RetryOutcome[];
  /** Answering machines: `bot` keeps the bot's setting, the rest overrides it for this campaign's calls. */
  amd_detect: 'bot' | 'on' | 'off';
  amd_on_machine: 'bot' | OnMachine;
}

/** A campaign's answering machine override as the API has it (what it leaves out is the bot's). */
export type AnsweringMachineOverride = Partial<Pick<AnsweringMachine, 'detect' | 'on_machine'>>;

export const DAY_LABELS: Record<Weekday, string> = { mon: 'Mon', tue: 'Tue', wed: 'Wed', thu: 'Thu', fri: 'Fri', sat: 'Sat', sun: 'Sun' };
export const RETRY_LABELS: Record<RetryOutcome, string> = { busy: 'Busy', no_answer: 'No answer', failed: 'Failed (not for numbers that do not exist)', voicemail: 'Voicemail (a machine answered; not when a message was left)' };

/** A new campaign: one call at a time is not assumed; a modest pace, no retries, no windows. */
export const emptyCampaignForm = (timezone: string, botId = ''): CampaignForm => ({
  name: '',
  bot_id: botId,
  from_number: '',
  default_region: '',
  timezone,
  windows: [],
  max_concurrency: '5',
  calls_per_second: '1',
  max_attempts: '1',
  delay_seconds: '600',
  retry_on: [],
  amd_detect: 'bot',
  amd_on_machine: 'bot',
});

/** A window added to the form: office hours on weekdays. */
export const newWindow = (): WindowForm => ({ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' });

/** The browser's own zone (the form's default); UTC when it cannot tell. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Whether this browser's Intl knows the zone (the backend checks its own Intl too). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Text as typed → a number for the schema to judge; text that is no number stays text (the schema says "must be a number"). */
function num(text: string): number | string | undefined {
  const t = text.trim();
  if (!t) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Schema messages where the form can say it better. */
function friendlier(errors: FieldErrors): FieldErrors {
  const out: FieldErrors = {};
  for (const [key, message] of Object.entries(errors)) {
    if (/^windows\.\d+\.(start|end)$/.test(key) && message.startsWith('Must match')) out[key] = 'Use a time of day, HH:MM (24-hour), e.g. 09:00.';
    else if (/^windows\.\d+\.days$/.test(key)) out[key] = 'Choose at least one day.';
    else out[key] = message;
  }
  return out;
}

/** The POST body for the form, and its problems by field (paths as the backend's 422 details name them). */
export function campaignCreateBody(form: CampaignForm): { body: CampaignCreate; errors: FieldErrors } {
  const from = parseNumber(form.from_number);
  const body = {
    name: form.name.trim(),
    bot_id: form.bot_id,
    ...(from ? { from_number: from } : {}),
    ...(form.default_region.trim() ? { default_region: form.default_region.trim().toUpperCase() } : {}),
    timezone: form.timezone.trim(),
    windows: form.windows.map((w) => ({ days: WEEKDAYS.filter((d) => w.days.includes(d)), start: w.start, end: w.end })),
    max_concurrency: num(form.max_concurrency),
    calls_per_second: num(form.calls_per_second),
    retry: { max_attempts: num(form.max_attempts), delay_seconds: num(form.delay_seconds), on: RETRY_OUTCOMES.filter((o) => form.retry_on.includes(o)) },
    ...amdOverrideBody(form),
  } as CampaignCreate;
  const errors = friendlier(validateCampaignCreate(body));
  if (!form.bot_id) errors.bot_id = 'Choose the bot that makes the calls.';
  if (errors.default_region || (body.default_region && !isPhoneRegion(body.default_region)))
    errors.default_region = 'Use a two-letter country code (ISO 3166), e.g. US, GB or DE.';
  if (!errors.timezone && !isTimeZone(body.timezone)) errors.timezone = 'Not a time zone this browser knows; use an IANA name, e.g. Europe/Berlin.';
  body.windows.forEach((w, i) => {
    const key = `windows.${i}.end`;
    if (!errors[key] && !errors[`windows.${i}.start`] && minutes(w.end) <= minutes(w.start)) errors[key] = 'Must be after the start.';
  });
  return { body, errors };
}

/** The override sent with the campaign: nothing while both follow the bot (the campaign then answers null). */
export function amdOverrideBody(form: Pick<CampaignForm, 'amd_detect' | 'amd_on_machine'>): { answering_machine?: AnsweringMachineOverride } {
  const o: AnsweringMachineOverride = {};
  if (form.amd_detect !== 'bot') o.detect = form.amd_detect === 'on';
  if (form.amd_on_machine !== 'bot') o.on_machine = form.amd_on_machine;
  return Object.keys(o).length ? { answering_machine: o } : {};
}

/** A bot's answering machine settings (a bot from an older backend has none: the defaults). */
const botAmd = (bot: { answering_machine?: AnsweringMachine } | undefined): AnsweringMachine => ({ ...BOT_DEFAULTS.answering_machine, ...bot?.answering_machine });

/** The choices of the override's two selects; the bot's own setting named when the bot is known. */
export function amdChoices(bot?: { answering_machine?: AnsweringMachine }): {
  detect: Array<readonly [CampaignForm['amd_detect'], string]>;
  onMachine: Array<readonly [CampaignForm['amd_on_machine'], string]>;
} {
  const am = bot ? botAmd(bot) : null;
  const botsDetect = am ? ` (${am.detect ? 'detects' : 'does not detect'})` : '';
  const botsOnMachine = am ? ` (${ON_MACHINE_LABELS[am.on_machine].toLowerCase()})` : '';
  return {
    detect: [
      ['bot', `The bot’s setting${botsDetect}`],
      ['on', 'Detect'],
      ['off', 'Don’t detect'],
    ],
    onMachine: [
      ['bot', `The bot’s setting${botsOnMachine}`],
      ['hangup', ON_MACHINE_LABELS.hangup],
      ['leave_message', ON_MACHINE_LABELS.leave_message],
    ],
  };
}

/**
 * What the form should point out about the override with this bot (not a refusal: the API takes it, and
 * the bot may change before the campaign runs): a message to leave that the bot does not have, or a choice
 * for machines (or a voicemail retry) that no call uses because nothing detects them.
 */
export function amdNote(form: Pick<CampaignForm, 'amd_detect' | 'amd_on_machine' | 'retry_on'>, bot: { answering_machine?: AnsweringMachine } | undefined): string | null {
  if (!bot) return null;
  const am = botAmd(bot);
  const detect = form.amd_detect === 'bot' ? am.detect : form.amd_detect === 'on';
  const onMachine = form.amd_on_machine === 'bot' ? am.on_machine : form.amd_on_machine;
  if (!detect) {
    if (form.retry_on.includes('voicemail')) return 'Machines are not detected on these calls: none ends as voicemail, so the voicemail retry never applies.';
    return form.amd_on_machine !== 'bot' ? 'Machines are not detected on these calls, so this choice does not apply.' : null;
  }
  if (onMachine === 'leave_message' && !am.message.trim()) return 'This bot has no message for machines, so it hangs up on them: write one in the bot’s Answering machines section.';
  return null;
}

/** The override as the campaign page reads it. */
export function amdOverrideSummary(o: AnsweringMachineOverride | null | undefined): string {
  if (!o || (o.detect === undefined && o.on_machine === undefined)) return 'The bot’s settings';
  const detect = o.detect === undefined ? 'the bot’s setting' : o.detect ? 'on' : 'off';
  const onMachine = o.on_machine === undefined ? 'the bot’s setting' : ON_MACHINE_LABELS[o.on_machine].toLowerCase();
  return `Detection: ${detect} · when a machine answers: ${onMachine}`;
}

/** An API refusal of the create body on the form's fields; what has no field stays in the banner. */
export function campaignApiErrors(err: { code: string; fieldErrors: FieldErrors }): FieldErrors {
  switch (err.code) {
    case 'bot_not_found':
      return { bot_id: 'This bot no longer exists; choose another.' };
    case 'unknown_from_number':
      return { from_number: 'Not a number of any outbound trunk.' };
    default:
      return err.fieldErrors;
  }
}

export type CampaignCounts = Record<ContactStatus, number>;

/** Contacts the dialler still has to finish. */
const OPEN: ContactStatus[] = ['pending', 'dialing', 'retry_scheduled'];

/** Done (every contact not pending, dialling or waiting for a retry) out of all, and the whole percent done. */
export function campaignProgress(counts: CampaignCounts): { done: number; total: number; percent: number } {
  const total = CONTACT_STATUSES.reduce((n, s) => n + (counts[s] ?? 0), 0);
  const done = total - OPEN.reduce((n, s) => n + (counts[s] ?? 0), 0);
  return { done, total, percent: total ? Math.floor((done * 100) / total) : 0 };
}

export const COUNT_LABELS: Record<ContactStatus, string> = {
  pending: 'Pending',
  dialing: 'Dialling',
  retry_scheduled: 'Retry scheduled',
  completed: 'Completed',
  busy: 'Busy',
  no_answer: 'No answer',
  failed: 'Failed',
  skipped_dnc: 'Skipped (do-not-call)',
  canceled: 'Canceled',
};

/** "2 completed · 1 busy · 1 pending": the non-zero counts, outcomes first. */
export function countsSummary(counts: CampaignCounts): string {
  const order: ContactStatus[] = ['completed', 'busy', 'no_answer', 'failed', 'skipped_dnc', 'canceled', 'dialing', 'retry_scheduled', 'pending'];
  const parts = order.filter((s) => counts[s]).map((s) => `${counts[s]} ${COUNT_LABELS[s].toLowerCase()}`);
  return parts.length ? parts.join(' · ') : 'No contacts yet';
}

export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel';

/** The status changes the backend allows from each status (draft → running ⇄ paused → canceled). */
export function campaignActions(status: CampaignStatus): CampaignAction[] {
  switch (status) {
    case 'draft':
      return ['start', 'cancel'];
    case 'running':
      return ['pause', 'cancel'];
    case 'paused':
      return ['resume', 'cancel'];
    default:
      return [];
  }
}

/** Whether the campaign can still change by itself (the detail page keeps reading it meanwhile). */
export const isLive = (status: CampaignStatus): boolean => status === 'running' || status === 'paused';
