// The new-campaign form: the body it sends, its problems by field (the shared schema plus time zones and
// window order), API refusals on fields, and how a campaign's progress, counts and actions read.
import { BOT_DEFAULTS } from '@voice-platform/schemas/bot.js';
import { RETRY_OUTCOMES } from '@voice-platform/schemas/campaigns.js';
import {
  amdChoices,
  amdNote,
  amdOverrideBody,
  amdOverrideSummary,
  campaignActions,
  campaignApiErrors,
  campaignCreateBody,
  campaignProgress,
  countsSummary,
  emptyCampaignForm,
  isLive,
  newWindow,
  RETRY_LABELS,
  type CampaignCounts,
} from './campaignForm.js';

const form = () => ({ ...emptyCampaignForm('Europe/Berlin', '65f0c0ffee65f0c0ffee65f0'), name: ' Renewals ' });
const counts = (patch: Partial<CampaignCounts>): CampaignCounts => ({
  pending: 0,
  dialing: 0,
  retry_scheduled: 0,
  completed: 0,
  busy: 0,
  no_answer: 0,
  failed: 0,
  skipped_dnc: 0,
  canceled: 0,
  ...patch,
});

describe('campaign form', () => {
  it('builds the create body: numbers from text, days in week order, outcomes in their order, the caller ID without separators', () => {
    const { body, errors } = campaignCreateBody({
      ...form(),
      from_number: '+49 151 1234 5678',
      windows: [{ days: ['fri', 'mon'], start: '09:00', end: '17:30' }],
      max_concurrency: '3',
      calls_per_second: '0.5',
      max_attempts: '3',
      delay_seconds: '120',
      retry_on: ['no_answer', 'busy'],
    });
    expect(errors).toEqual({});
    expect(body).toEqual({
      name: 'Renewals',
      bot_id: '65f0c0ffee65f0c0ffee65f0',
      from_number: '+4915112345678',
      timezone: 'Europe/Berlin',
      windows: [{ days: ['mon', 'fri'], start: '09:00', end: '17:30' }],
      max_concurrency: 3,
      calls_per_second: 0.5,
      retry: { max_attempts: 3, delay_seconds: 120, on: ['busy', 'no_answer'] },
    });
    // No caller ID: none sent (the default trunk's); no windows: always.
    expect(campaignCreateBody(form()).body).toEqual({
      name: 'Renewals',
      bot_id: '65f0c0ffee65f0c0ffee65f0',
      timezone: 'Europe/Berlin',
      windows: [],
      max_concurrency: 5,
      calls_per_second: 1,
      retry: { max_attempts: 1, delay_seconds: 600, on: [] },
    });
  });

  it('names each bad field with the shared schema\'s limits', () => {
    const { errors } = campaignCreateBody({
      ...emptyCampaignForm('Mars/Olympus Mons'),
      from_number: '12345',
      max_concurrency: '0',
      calls_per_second: '11',
      max_attempts: 'two',
      delay_seconds: '10',
    });
    expect(errors).toEqual({
      name: 'This field is required.',
      bot_id: 'Choose the bot that makes the calls.',
      from_number: 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
      timezone: 'Must be an IANA time zone name, e.g. Europe/Berlin or UTC.',
      max_concurrency: 'Must be at least 1.',
      calls_per_second: 'Must be at most 10.',
      'retry.max_attempts': 'Must be a whole number.',
      'retry.delay_seconds': 'Must be at least 30.',
    });
    expect(campaignCreateBody({ ...form(), calls_per_second: '0', max_concurrency: '' }).errors).toEqual({
      calls_per_second: 'Must be greater than 0.',
      max_concurrency: 'This field is required.',
    });
  });

  it('checks the time zone against Intl and each window: a day, times of day, the end after the start', () => {
    expect(campaignCreateBody({ ...form(), timezone: 'Europe/Atlantis' }).errors).toEqual({ timezone: 'Not a time zone this browser knows; use an IANA name, e.g. Europe/Berlin.' });
    const { errors } = campaignCreateBody({
      ...form(),
      windows: [newWindow(), { days: [], start: '9am', end: '17:00' }, { days: ['sat'], start: '18:00', end: '08:00' }, { days: ['sun'], start: '10:00', end: '24:00' }],
    });
    expect(errors).toEqual({
      'windows.1.days': 'Choose at least one day.',
      'windows.1.start': 'Use a time of day, HH:MM (24-hour), e.g. 09:00.',
      'windows.2.end': 'Must be after the start.',
    });
  });

  it("sends the region national contact numbers are read in, as the API spells it, and only when chosen", () => {
    expect(campaignCreateBody({ ...form(), default_region: ' gb ' })).toMatchObject({ body: { default_region: 'GB' }, errors: {} });
    expect('default_region' in campaignCreateBody(form()).body).toBe(false);
    for (const bad of ['USA', 'U', 'XX'])
      expect(campaignCreateBody({ ...form(), default_region: bad }).errors).toEqual({ default_region: 'Use a two-letter country code (ISO 3166), e.g. US, GB or DE.' });
  });

  it('puts API refusals on their fields', () => {
    expect(campaignApiErrors({ code: 'bot_not_found', fieldErrors: {} })).toEqual({ bot_id: 'This bot no longer exists; choose another.' });
    expect(campaignApiErrors({ code: 'unknown_from_number', fieldErrors: {} })).toEqual({ from_number: 'Not a number of any outbound trunk.' });
    expect(campaignApiErrors({ code: 'validation_failed', fieldErrors: { timezone: 'Is not an IANA time zone this server knows.' } })).toEqual({ timezone: 'Is not an IANA time zone this server knows.' });
  });
});

describe('campaign answering machines', () => {
  const bot = (patch: Partial<typeof BOT_DEFAULTS.answering_machine> = {}) => ({ answering_machine: { ...BOT_DEFAULTS.answering_machine, ...patch } });

  it('sends no override while both follow the bot, else only what the campaign chooses', () => {
    expect(emptyCampaignForm('UTC')).toMatchObject({ amd_detect: 'bot', amd_on_machine: 'bot' });
    expect(campaignCreateBody(form()).body).not.toHaveProperty('answering_machine');
    expect(amdOverrideBody({ amd_detect: 'on', amd_on_machine: 'bot' })).toEqual({ answering_machine: { detect: true } });
    expect(amdOverrideBody({ amd_detect: 'off', amd_on_machine: 'bot' })).toEqual({ answering_machine: { detect: false } });
    expect(amdOverrideBody({ amd_detect: 'bot', amd_on_machine: 'hangup' })).toEqual({ answering_machine: { on_machine: 'hangup' } });
    const { body, errors } = campaignCreateBody({ ...form(), amd_detect: 'on', amd_on_machine: 'leave_message' });
    expect(errors).toEqual({});
    expect(body.answering_machine).toEqual({ detect: true, on_machine: 'leave_message' });
  });

  it('retries voicemail among the outcomes, in their order, with words for it', () => {
    expect(RETRY_OUTCOMES).toContain('voicemail');
    const { body, errors } = campaignCreateBody({ ...form(), max_attempts: '2', retry_on: ['voicemail', 'busy'] });
    expect(errors).toEqual({});
    expect(body.retry).toEqual({ max_attempts: 2, delay_seconds: 600, on: ['busy', 'voicemail'] });
    expect(RETRY_LABELS.voicemail).toBe('Voicemail (a machine answered; not when a message was left)');
  });

  it('names the bot’s own setting in the choices once the bot is known', () => {
    expect(amdChoices().detect.map(([, l]) => l)).toEqual(['The bot’s setting', 'Detect', 'Don’t detect']);
    expect(amdChoices().onMachine).toEqual([['bot', 'The bot’s setting'], ['hangup', 'Hang up'], ['leave_message', 'Leave a message']]);
    const choices = amdChoices(bot({ detect: true, on_machine: 'leave_message', message: 'Call us.' }));
    expect(choices.detect[0]).toEqual(['bot', 'The bot’s setting (detects)']);
    expect(choices.onMachine[0]).toEqual(['bot', 'The bot’s setting (leave a message)']);
    expect(amdChoices(bot()).detect[0]).toEqual(['bot', 'The bot’s setting (does not detect)']);
    expect(amdChoices({}).onMachine[0]).toEqual(['bot', 'The bot’s setting (hang up)']); // a bot from an older backend
  });

  it('points out a message to leave that the bot lacks, and choices nothing detects', () => {
    const f = { ...form() };
    expect(amdNote(f, undefined)).toBeNull();
    expect(amdNote(f, bot())).toBeNull();
    expect(amdNote({ ...f, amd_detect: 'on', amd_on_machine: 'leave_message' }, bot())).toBe('This bot has no message for machines, so it hangs up on them: write one in the bot’s Answering machines section.');
    expect(amdNote({ ...f, amd_detect: 'on', amd_on_machine: 'leave_message' }, bot({ message: 'Call us.' }))).toBeNull();
    expect(amdNote({ ...f, amd_detect: 'bot', amd_on_machine: 'bot' }, bot({ detect: true, on_machine: 'leave_message', message: ' ' }))).toMatch(/^This bot has no message/);
    expect(amdNote({ ...f, amd_on_machine: 'hangup' }, bot())).toBe('Machines are not detected on these calls, so this choice does not apply.');
    expect(amdNote({ ...f, amd_detect: 'off', retry_on: ['voicemail'] }, bot({ detect: true }))).toBe('Machines are not detected on these calls: none ends as voicemail, so the voicemail retry never applies.');
    expect(amdNote({ ...f, amd_detect: 'on', retry_on: ['voicemail'] }, bot())).toBeNull();
  });

  it('reads the stored override on the campaign page', () => {
    expect(amdOverrideSummary(null)).toBe('The bot’s settings');
    expect(amdOverrideSummary({})).toBe('The bot’s settings');
    expect(amdOverrideSummary({ detect: true })).toBe('Detection: on · when a machine answers: the bot’s setting');
    expect(amdOverrideSummary({ detect: false, on_machine: 'leave_message' })).toBe('Detection: off · when a machine answers: leave a message');
    expect(amdOverrideSummary({ on_machine: 'hangup' })).toBe('Detection: the bot’s setting · when a machine answers: hang up');
  });
});

describe('campaign progress', () => {
  it('counts done contacts: everything not pending, dialling or waiting for a retry', () => {
    expect(campaignProgress(counts({}))).toEqual({ done: 0, total: 0, percent: 0 });
    expect(campaignProgress(counts({ pending: 1, dialing: 1, retry_scheduled: 1, completed: 2, busy: 1, failed: 0, skipped_dnc: 1 }))).toEqual({ done: 4, total: 7, percent: 57 });
    expect(campaignProgress(counts({ completed: 1, canceled: 2 }))).toEqual({ done: 3, total: 3, percent: 100 });
  });

  it('sums up the non-zero counts, outcomes first', () => {
    expect(countsSummary(counts({}))).toBe('No contacts yet');
    expect(countsSummary(counts({ pending: 2, completed: 1, skipped_dnc: 1, no_answer: 3 }))).toBe('1 completed · 3 no answer · 1 skipped (do-not-call) · 2 pending');
  });

  it('offers the status changes the backend allows, and polls only while the campaign can change', () => {
    expect(campaignActions('draft')).toEqual(['start', 'cancel']);
    expect(campaignActions('running')).toEqual(['pause', 'cancel']);
    expect(campaignActions('paused')).toEqual(['resume', 'cancel']);
    expect(campaignActions('completed')).toEqual([]);
    expect(campaignActions('canceled')).toEqual([]);
    expect(['draft', 'running', 'paused', 'completed', 'canceled'].map((s) => isLive(s as 'draft'))).toEqual([false, true, true, false, false]);
  });
});
