// The offline `scripted` LLM: the bot's policy picks the reply. The caller's words are matched against
// each intent's example phrases; the best match above a threshold wins, otherwise the fallback.
// Replies are rendered with the call's {{variables}} (schemas/src/templates.ts).
import { renderTemplate, type BotPolicy } from '@voice-platform/schemas';
import type { ChatMessage, LlmChunk, LlmProvider } from './llm.js';

const MATCH_THRESHOLD = 0.5;

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

export interface ScriptedDecision {
  intent: string | null;
  reply: string;
  endCall: boolean;
}

export function decide(policy: BotPolicy | null, utterance: string, variables: Record<string, string>): ScriptedDecision {
  if (!policy) return { intent: null, reply: `You said: ${utterance}`, endCall: false };
  let best: { score: number; intent: BotPolicy['intents'][number] } | null = null;
  for (const intent of policy.intents) {
    for (const ex of intent.examples) {
      const score = similarity(utterance, ex);
      if (!best || score > best.score) best = { score, intent };
    }
  }
  if (best && best.score >= MATCH_THRESHOLD) {
    return { intent: best.intent.name, reply: renderTemplate(best.intent.reply, variables), endCall: best.intent.end_call ?? false };
  }
  return { intent: null, reply: renderTemplate(policy.fallback.reply, variables), endCall: policy.fallback.end_call ?? false };
}

/** Resume: `chars`. The same messages give the same reply, so a resumed attempt is exact (it never fails, though). */
export class ScriptedLlm implements LlmProvider {
  readonly name = 'scripted';
  readonly resume = 'chars' as const;
  constructor(
    private readonly policy: BotPolicy | null,
    private readonly variables: Record<string, string>,
  ) {}

  async *generate(messages: ChatMessage[], _signal?: AbortSignal): AsyncIterable<LlmChunk> {
    const last = [...messages].reverse().find((m) => m.role === 'user');
    const d = decide(this.policy, typeof last?.content === 'string' ? last.content : '', this.variables);
    yield { type: 'text', text: d.reply };
    if (d.endCall) yield { type: 'end_call' };
  }
}
