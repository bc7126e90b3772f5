// The bot form's state (strings as typed) ↔ the API body. Numbers that do not parse stay strings so
// the shared schema reports them ("Must be a number.") exactly like the backend would.
import { BOT_DEFAULTS, type Bot, type BotCreate, type BotTool } from '@voice-platform/schemas/bot.js';

interface IntentForm {
  name: string;
  examples: string; // one phrase per line
  reply: string;
  end_call: boolean;
}

/** A tool as edited: `parameters` is the JSON text of its JSON Schema ('' for none). */
interface ToolForm {
  name: string;
  description: string;
  parameters: string;
}

export interface BotForm {
  name: string;
  active: boolean;
  language: string;
  prompt: string;
  greeting: string;
  variables: Array<{ name: string; required: boolean; description: string }>;
  voice: { provider: string; voice_id: string; speed: string };
  stt: { provider: string; model: string; language: string };
  llm: { provider: string; model: string; temperature: string };
  max_call_seconds: string;
  end_of_turn_silence_ms: string;
  tools: ToolForm[];
  usePolicy: boolean;
  intents: IntentForm[];
  fallback: { reply: string; end_call: boolean };
}

export const emptyIntent = (): IntentForm => ({ name: '', examples: '', reply: '', end_call: false });
export const emptyTool = (): ToolForm => ({ name: '', description: '', parameters: '' });

/** A stored tool as form text; parameters pretty-printed so they can be edited by hand. */
export function toolToForm(t: BotTool): ToolForm {
  return { name: t.name, description: t.description ?? '', parameters: t.parameters === undefined ? '' : JSON.stringify(t.parameters, null, 2) };
}

/**
 * The parameters text as a value for the schema: '' (blank) is no parameters at all; text that is not
 * JSON stays a string, so the schema reports the field ("Must be a JSON object.") as it does for numbers.
 */
export function parseParameters(text: string): unknown {
  const t = text.trim();
  if (t === '') return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return t;
  }
}

export function toolToBody(t: ToolForm): BotTool {
  const parameters = parseParameters(t.parameters);
  return {
    name: t.name.trim(),
    description: t.description,
    ...(parameters !== undefined ? { parameters: parameters as BotTool['parameters'] } : {}),
  };
}

export function botToForm(bot?: Bot): BotForm {
  const b = bot ?? { ...BOT_DEFAULTS, name: '' };
  return {
    name: b.name,
    active: b.active,
    language: b.language,
    prompt: b.prompt,
    greeting: b.greeting,
    variables: b.variables.map((v) => ({ name: v.name, required: v.required ?? false, description: v.description ?? '' })),
    voice: { ...b.voice, speed: String(b.voice.speed) },
    stt: { ...b.stt },
    llm: { ...b.llm, temperature: String(b.llm.temperature) },
    max_call_seconds: String(b.max_call_seconds),
    end_of_turn_silence_ms: String(b.turn_detection.end_of_turn_silence_ms),
    tools: b.tools.map(toolToForm),
    usePolicy: b.policy !== null,
    intents: (b.policy?.intents ?? []).map((i) => ({ name: i.name, examples: i.examples.join('\n'), reply: i.reply, end_call: i.end_call ?? false })),
    fallback: { reply: b.policy?.fallback.reply ?? '', end_call: b.policy?.fallback.end_call ?? false },
  };
}

/** A typed number, or the raw text when it is not one (the schema then names the problem). */
export function parseNumber(text: string): number | string {
  const t = text.trim();
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
}

export function formToBody(f: BotForm): BotCreate {
  return {
    name: f.name.trim(),
    active: f.active,
    language: f.language.trim(),
    prompt: f.prompt,
    greeting: f.greeting,
    variables: f.variables.map((v) => ({ name: v.name.trim(), required: v.required, description: v.description })),
    voice: { provider: f.voice.provider.trim(), voice_id: f.voice.voice_id.trim(), speed: parseNumber(f.voice.speed) as number },
    stt: { provider: f.stt.provider.trim(), model: f.stt.model.trim(), language: f.stt.language.trim() },
    llm: { provider: f.llm.provider.trim(), model: f.llm.model.trim(), temperature: parseNumber(f.llm.temperature) as number },
    max_call_seconds: parseNumber(f.max_call_seconds) as number,
    turn_detection: { end_of_turn_silence_ms: parseNumber(f.end_of_turn_silence_ms) as number },
    tools: f.tools.map(toolToBody),
    policy: f.usePolicy
      ? {
          intents: f.intents.map((i) => ({
            name: i.name.trim(),
            examples: i.examples.split('\n').map((s) => s.trim()).filter(Boolean),
            reply: i.reply,
            ...(i.end_call ? { end_call: true } : {}),
          })),
          fallback: { reply: f.fallback.reply, ...(f.fallback.end_call ? { end_call: true } : {}) },
        }
      : null,
  };
}
