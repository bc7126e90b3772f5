// How the offline `scripted` policy reads a caller's turn: which intent the words (or keys) select. The
// worker's scripted LLM answers with it during the call (worker/src/llm/scripted.ts) and the backend's
// post-call analysis reads the transcript with it afterwards (docs/design.md §10), so both match alike.
import type { BotPolicy } from './bot.js';

/** An example phrase must score at least this (similarity) for its intent to be chosen. */
export const MATCH_THRESHOLD = 0.5;

/** The user message of a keypad turn (docs/design.md §9): the stage words the caller's keys this way. */
export const keypadTurn = (digits: string) => `The caller pressed ${digits} on the keypad.`;

const KEYPAD_TURN = /^The caller pressed ([0-9*#]{1,32}) on the keypad\.$/;

/** The keys of a keypad turn, or null for spoken words. */
export const keysOf = (message: string): string | null => KEYPAD_TURN.exec(message.trim())?.[1] ?? null;

export const words = (text: string): string[] =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** 1 for the same words, 0.9 when the example is contained in the utterance, else the word-overlap F1. */
export function similarity(utterance: string, example: string): number {
  const u = words(utterance);
  const e = words(example);
  if (!u.length || !e.length) return 0;
  if (u.join(' ') === e.join(' ')) return 1;
  if (` ${u.join(' ')} `.includes(` ${e.join(' ')} `)) return 0.9;
  const counts = new Map<string, number>();
  for (const w of e) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of u) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  return (2 * common) / (u.length + e.length);
}

export type PolicyIntent = BotPolicy['intents'][number];

/**
 * The intent a caller's turn selects, or null (the fallback). `utterance` is the turn as the LLM sees it: a
 * keypad turn reads `The caller pressed <keys> on the keypad.` (keypadTurn) and selects the intent whose `dtmf`
 * is exactly those keys; words select the intent with the best-scoring example at or above MATCH_THRESHOLD
 * (the first such intent on a tie).
 */
export function matchIntent(policy: BotPolicy, utterance: string): PolicyIntent | null {
  const keys = keysOf(utterance);
  if (keys !== null) return policy.intents.find((i) => i.dtmf === keys) ?? null;
  let best: { score: number; intent: PolicyIntent } | null = null;
  for (const intent of policy.intents) {
    for (const ex of intent.examples) {
      const score = similarity(utterance, ex);
      if (!best || score > best.score) best = { score, intent };
    }
  }
  return best && best.score >= MATCH_THRESHOLD ? best.intent : null;
}

/** A transcript's caller turn as the scripted LLM saw it during the call (keys worded as keypadTurn). */
export const turnUtterance = (entry: { text: string; dtmf?: boolean }): string => (entry.dtmf ? keypadTurn(entry.text) : entry.text);
