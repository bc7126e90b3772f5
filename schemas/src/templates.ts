// `{{variable}}` templates in prompt, greeting and policy replies: one parser and one renderer for the
// backend (config), the worker (scripted replies) and the console (editor checks).
import { TEMPLATE_PLACEHOLDER, type BotPolicy } from './bot.js';

/** The variable names a text's placeholders use, in order. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(TEMPLATE_PLACEHOLDER)].map((m) => m[1] ?? '');
}

/**
 * Replaces each placeholder with its value; an absent optional variable renders as empty text. Own
 * properties only: a variable named `constructor` or `__proto__` is a name like any other.
 */
export function renderTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(TEMPLATE_PLACEHOLDER, (_, name: string) => (Object.hasOwn(variables, name) ? String(variables[name]) : ''));
}

/** Every template field of a bot, with its field path for error details. */
export function templateFields(bot: { prompt: string; greeting: string; policy: BotPolicy | null }): Array<[string, string]> {
  const out: Array<[string, string]> = [
    ['prompt', bot.prompt],
    ['greeting', bot.greeting],
  ];
  bot.policy?.intents.forEach((intent, i) => out.push([`policy.intents.${i}.reply`, intent.reply]));
  if (bot.policy) out.push(['policy.fallback.reply', bot.policy.fallback.reply]);
  return out;
}
