// `{{variable}}` templates in prompt, greeting and policy replies.
import { TEMPLATE_PLACEHOLDER, type BotPolicy } from '@voice-platform/schemas';

export function placeholders(text: string): string[] {
  return [...text.matchAll(TEMPLATE_PLACEHOLDER)].map((m) => m[1] ?? '');
}

/** Replaces each placeholder with its value; an absent optional variable renders as empty text. */
export function render(text: string, variables: Record<string, string>): string {
  return text.replace(TEMPLATE_PLACEHOLDER, (_, name: string) => (Object.hasOwn(variables, name) ? variables[name]! : ''));
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
