// Redaction on the backend's side (shared/DESIGN.md §16): the worker masks a call's text before it reports it,
// but a worker that predates the bot's setting (a rolling upgrade, a config it cached) may not. So what a call
// event brings (transcript, turns, actions) is masked once more with the bot's entities as it is stored; masking
// is idempotent, so text the worker masked passes unchanged. Webhooks, the campaign CSV export and the post-call
// analysis read the stored call: they only ever see the mask.
import type { Db } from 'mongodb';
import { redactionOf, redactText, type CallTurn, type RedactionEntity } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';

/** The bot's entities (none for a bot without the setting, or gone). A small read by _id. */
export async function botRedaction(db: Db, botId: string): Promise<readonly RedactionEntity[]> {
  const bot = await db.collection<{ _id: string; redaction?: { entities?: string[] } }>(COLLECTIONS.bots).findOne({ _id: botId }, { projection: { redaction: 1 } });
  return redactionOf(bot?.redaction).entities;
}

/** True when a call event brings text a bot may redact (else no bot read is needed). */
export const hasCallText = (ev: { transcript?: unknown[]; turns?: unknown[]; actions?: unknown[] }): boolean => Boolean(ev.transcript?.length || ev.turns?.length || ev.actions?.length);

export const redactTranscript = <T extends { text: string }>(lines: readonly T[], entities: readonly RedactionEntity[]): T[] => lines.map((l) => ({ ...l, text: redactText(l.text, entities) }));
export const redactTurns = (turns: readonly CallTurn[], entities: readonly RedactionEntity[]): CallTurn[] => turns.map((t) => ({ ...t, user_text: redactText(t.user_text, entities) }));
