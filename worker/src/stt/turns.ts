// What the words of a turn say about it (docs/design.md §11): whether an utterance is complete (smart turn
// detection ends it after min_silence_ms) and whether it is a backchannel (acknowledgements only, which do
// not interrupt the bot). English lists; other languages fall back to them until they have their own.
import type { BotPolicy } from '@voice-platform/schemas';
import { similarity } from '@voice-platform/schemas';

/** Acknowledgements a caller says over a speaker who should go on. */
const ACKNOWLEDGEMENTS: ReadonlySet<string> = new Set([
  'uh-huh', 'mm-hmm', 'mhm', 'mm', 'hmm', 'hm', 'yeah', 'yep', 'yup', 'yes', 'okay', 'ok', 'right', 'sure', 'alright', 'aha', 'ah',
]);

/** Words a finished sentence does not end in: conjunctions, fillers, prepositions, articles, and a subject or auxiliary waiting for its verb. */
const OPEN_ENDINGS: ReadonlySet<string> = new Set([
  // conjunctions
  'and', 'but', 'or', 'so', 'because', 'if', 'that', 'than', 'then', 'when', 'while', 'although', 'though', 'unless', 'until', 'since', 'as', 'nor', 'whether',
  // fillers
  'uh', 'um', 'er', 'erm', 'ah', 'like',
  // prepositions
  'to', 'of', 'in', 'on', 'at', 'for', 'with', 'from', 'by', 'about', 'into', 'onto', 'over', 'under', 'after', 'before', 'between', 'through', 'during', 'without', 'within', 'per', 'via',
  // articles and determiners
  'the', 'a', 'an', 'my', 'your', 'our', 'their', 'his', 'her', 'its', 'this', 'these', 'those', 'some', 'any',
  // a subject or an auxiliary whose verb is still to come
  'i', 'we', 'will', 'would', 'can', 'could', 'should', 'shall', 'must', 'might', 'may', "i'll", "we'll", "i'm", 'am',
]);

/** Words as the lists spell them: lower case, "uh huh" and "mm hmm" as one word each. */
export function turnWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/\b(uh)[\s-]+(huh)\b/g, 'uh-huh')
    .replace(/\b(mm)[\s-]+(hmm)\b/g, 'mm-hmm')
    .replace(/[^a-z0-9'\- ]+/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^-+|-+$/g, ''))
    .filter(Boolean);
}

/**
 * Acknowledgements only, fewer than `minWords` of them: the bot goes on. Nothing heard (yet) is not a backchannel
 * decision either way: the caller decides with the next words.
 */
export function isBackchannel(text: string, minWords: number): boolean {
  const words = turnWords(text);
  return words.length > 0 && words.length < minWords && words.every((w) => ACKNOWLEDGEMENTS.has(w));
}

/** Words were heard and one of them is not an acknowledgement (or there are `minWords` of them): the bot stops. */
export function interrupts(text: string, minWords: number): boolean {
  const words = turnWords(text);
  return words.length >= minWords || words.some((w) => !ACKNOWLEDGEMENTS.has(w));
}

/**
 * Is what was heard a whole utterance? A scripted bot: it holds one of the policy's example phrases whole (a
 * fragment of an example is not enough). Otherwise: there are words and the last one can end a sentence.
 */
export function completeUtterance(policy: BotPolicy | null, text: string): boolean {
  const words = turnWords(text);
  if (!words.length) return false;
  const examples = policy?.intents.flatMap((i) => i.examples ?? []) ?? [];
  // A policy's own phrase, word for word, is whole whatever its last word ("repeat that" ends as a conjunction does).
  const said = words.join(' ');
  if (examples.some((ex) => turnWords(ex).join(' ') === said)) return true;
  if (OPEN_ENDINGS.has(words[words.length - 1]!)) return false;
  return !policy?.intents.length || examples.some((ex) => similarity(text, ex) >= 0.9);
}
