// Post-call analysis of an OpenAI-compatible bot (docs/design.md §10): one chat completions request with the
// transcript and `response_format: {type: "json_schema", json_schema: {name, strict: true, schema}}`, the schema
// built from the bot's analysis settings (analysisSchema), temperature 0, within ANALYSIS_TIMEOUT_MS. The answer
// is parsed and checked against that schema: one that does not fit is a failed attempt, as is any non-2xx.
//
// Where: the bot's llm.base_url, else OPENAI_BASE_URL. The key: OPENAI_API_KEY, never sent to a bot's own
// base_url (an address whoever edits a bot chose), as the worker does (worker/src/providers.ts). Neither the key
// nor the provider's error text is ever logged or stored: a failure is described by its status or kind.
import { Ajv, type ValidateFunction } from 'ajv';
import type { AnalysisField, AnalysisSettings, LlmSettings } from '@voice-platform/schemas';
import type { AnalysisData } from '../calls/analysis.js';
import type { AnalysisResult } from './scripted.js';

/** An attempt that failed; `retry` false: another attempt cannot do better (a setting is missing). */
export class AnalysisFailure extends Error {
  constructor(
    message: string,
    readonly retry = true,
  ) {
    super(message);
    this.name = 'AnalysisFailure';
  }
}

/** The name of the structured answer (response_format.json_schema.name). */
export const ANALYSIS_SCHEMA_NAME = 'call_analysis';

function fieldSchema(f: AnalysisField): Record<string, unknown> {
  const description = f.description ? { description: f.description } : {};
  if (f.type === 'enum') return { type: ['string', 'null'], enum: [...(f.values ?? []), null], ...description };
  return { type: [f.type, 'null'], ...description };
}

/**
 * The JSON Schema of the answer (strict mode: every property required, no others; a field the call did not
 * tell is null): `data` with one property per field (when there are fields), `summary` (a string) when a summary
 * is asked for, `success` (a boolean) when a criterion is set.
 */
export function analysisSchema(settings: AnalysisSettings): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  if (settings.fields.length) {
    properties.data = {
      type: 'object',
      description: 'What the call told about each field; null for a field it did not tell',
      properties: Object.fromEntries(settings.fields.map((f) => [f.name, fieldSchema(f)])),
      required: settings.fields.map((f) => f.name),
      additionalProperties: false,
    };
  }
  if (settings.summary) properties.summary = { type: 'string', description: 'Two or three sentences on what happened in the call' };
  if (settings.success !== null) properties.success = { type: 'boolean', description: `Whether the call met the success criterion: ${settings.success}` };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

interface Turn {
  role: 'user' | 'bot';
  text: string;
  dtmf?: boolean;
}

/** The request's messages: what to do, then the transcript. */
export function analysisMessages(settings: AnalysisSettings, transcript: readonly Turn[]): Array<{ role: 'system' | 'user'; content: string }> {
  const lines = [
    'You analyse a finished phone call between a voice bot and a caller; its transcript follows.',
    'Answer with one JSON object that fits the given schema and nothing else.',
  ];
  if (settings.fields.length) {
    lines.push('Fill `data` from what the caller said; use null for a field the call did not tell. Fields:');
    for (const f of settings.fields) lines.push(`- ${f.name} (${f.type === 'enum' ? `one of ${(f.values ?? []).map((v) => JSON.stringify(v)).join(', ')}` : f.type})${f.description ? `: ${f.description}` : ''}`);
  }
  if (settings.summary) lines.push('`summary`: two or three sentences on what happened in the call.');
  if (settings.success !== null) lines.push(`\`success\`: true only if the call met this criterion: ${settings.success}`);
  const said = transcript.map((t) => `${t.role === 'user' ? 'Caller' : 'Bot'}${t.dtmf ? ' (keypad)' : ''}: ${t.text}`).join('\n');
  return [
    { role: 'system', content: lines.join('\n') },
    { role: 'user', content: `Transcript:\n${said}` },
  ];
}

const ajv = new Ajv({ strict: false, allErrors: false });
const validators = new Map<string, ValidateFunction>();
function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    if (validators.size > 500) validators.clear();
    v = ajv.compile(schema);
    validators.set(key, v);
  }
  return v;
}

export interface OpenAiAnalysisOptions {
  llm: LlmSettings;
  /** OPENAI_BASE_URL and OPENAI_API_KEY. */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

type ChatAnswer = { choices?: Array<{ finish_reason?: string; message?: { content?: string | null; refusal?: string | null } }> };

export async function openaiAnalysis(settings: AnalysisSettings, transcript: readonly Turn[], opts: OpenAiAnalysisOptions): Promise<AnalysisResult> {
  const own = typeof opts.llm.base_url === 'string' && opts.llm.base_url ? opts.llm.base_url : null;
  const apiKey = own ? '' : opts.apiKey;
  if (!own && !apiKey) throw new AnalysisFailure('OPENAI_API_KEY is not set on the backend (or give the bot its own llm.base_url)', false);
  const schema = analysisSchema(settings);
  const body = {
    model: opts.llm.model,
    messages: analysisMessages(settings, transcript),
    temperature: 0,
    stream: false,
    response_format: { type: 'json_schema', json_schema: { name: ANALYSIS_SCHEMA_NAME, strict: true, schema } },
  };
  const signals = [AbortSignal.timeout(opts.timeoutMs), ...(opts.signal ? [opts.signal] : [])];
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${(own ?? opts.baseUrl).replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
      redirect: 'error',
      signal: AbortSignal.any(signals),
    });
    text = await res.text();
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') throw new AnalysisFailure(`chat completions: no answer within ${opts.timeoutMs} ms`);
    throw new AnalysisFailure(`chat completions: request failed${e.cause?.code ? ` (${e.cause.code})` : ''}`);
  }
  if (!res.ok) throw new AnalysisFailure(`chat completions: HTTP ${res.status}`);
  let answer: ChatAnswer;
  try {
    answer = JSON.parse(text) as ChatAnswer;
  } catch {
    throw new AnalysisFailure('chat completions: the answer is not JSON');
  }
  const choice = answer.choices?.[0];
  if (choice?.message?.refusal) throw new AnalysisFailure('chat completions: the model refused');
  if (choice?.finish_reason === 'length') throw new AnalysisFailure('chat completions: the answer was cut short (finish_reason length)');
  const content = choice?.message?.content;
  if (typeof content !== 'string') throw new AnalysisFailure('chat completions: the answer holds no message content');
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    throw new AnalysisFailure("chat completions: the model's answer is not JSON");
  }
  const validate = validatorFor(schema);
  if (!validate(parsed)) {
    const e = validate.errors?.[0];
    throw new AnalysisFailure(`chat completions: the model's answer does not fit the schema (${e ? `${e.instancePath || '/'} ${e.message ?? 'invalid'}` : 'invalid'})`);
  }
  const out = parsed as { data?: AnalysisData; summary?: string; success?: boolean };
  const data: AnalysisData = Object.fromEntries(settings.fields.map((f) => [f.name, out.data?.[f.name] ?? null]));
  return { summary: settings.summary ? (out.summary ?? null) : null, data, success: settings.success !== null ? (out.success ?? null) : null };
}
