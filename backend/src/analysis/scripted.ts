// Post-call analysis of a scripted bot (docs/design.md §10), offline from the transcript: each caller turn is
// matched against the policy's intents exactly as the worker's scripted LLM matched it during the call
// (schemas/src/intents.ts), and the intents that matched say what the call achieved:
// - data: every analysis field, null unless a matched intent `sets` it; a later turn's intent wins;
// - summary (analysis.summary): the matched intents' names in order, then the caller's words;
// - success (a criterion is set): the offline analysis cannot judge free text, so it reads the criterion for
//   names: true when an intent the criterion names (its name as a whole word) matched a caller turn, or a
//   boolean field it names ended true; false when it names some and none did; null when it names none.
import { matchIntent, turnUtterance, type AnalysisSettings, type BotPolicy } from '@voice-platform/schemas';
import type { AnalysisData } from '../calls/analysis.js';

export interface AnalysisResult {
  summary: string | null;
  data: AnalysisData;
  success: boolean | null;
}

interface Turn {
  role: 'user' | 'bot';
  text: string;
  dtmf?: boolean;
}

/** Longest caller quote in a summary, and longest summary. */
const MAX_QUOTE = 200;
const MAX_SUMMARY = 2000;

const quote = (text: string) => `"${text.length > MAX_QUOTE ? `${text.slice(0, MAX_QUOTE - 1)}…` : text}"`;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `name` appears in `text` as a whole word (not inside a longer word or name), case-insensitively. */
const names = (text: string, name: string) => new RegExp(`(^|[^A-Za-z0-9_])${escape(name)}($|[^A-Za-z0-9_])`, 'i').test(text);

export function scriptedAnalysis(settings: AnalysisSettings, policy: BotPolicy | null, transcript: readonly Turn[]): AnalysisResult {
  const callerTurns = transcript.filter((t) => t.role === 'user');
  const matched = policy ? callerTurns.map((t) => matchIntent(policy, turnUtterance(t))) : [];
  const data: AnalysisData = Object.fromEntries(settings.fields.map((f) => [f.name, null]));
  for (const intent of matched) {
    for (const [field, value] of Object.entries(intent?.sets ?? {})) if (Object.hasOwn(data, field)) data[field] = value;
  }

  let summary: string | null = null;
  if (settings.summary) {
    const intents = [...new Set(matched.flatMap((i) => (i ? [i.name] : [])))];
    const said = callerTurns.map((t) => (t.dtmf ? `pressed ${t.text}` : quote(t.text))).join('; ');
    summary = `${intents.length ? `Intents: ${intents.join(', ')}.` : 'No intent matched.'} The caller said: ${said}.`;
    if (summary.length > MAX_SUMMARY) summary = `${summary.slice(0, MAX_SUMMARY - 1)}…`;
  }

  let success: boolean | null = null;
  if (settings.success !== null) {
    const criterion = settings.success;
    const namedIntents = (policy?.intents ?? []).filter((i) => names(criterion, i.name)).map((i) => i.name);
    const namedFlags = settings.fields.filter((f) => f.type === 'boolean' && names(criterion, f.name)).map((f) => f.name);
    if (namedIntents.length || namedFlags.length) {
      success = matched.some((i) => i !== null && namedIntents.includes(i.name)) || namedFlags.some((f) => data[f] === true);
    }
  }
  return { summary, data, success };
}
