// How every part reads its settings: its own schema, validated once at boot from the environment,
// every missing or bad setting named in one error, and a secret's value never echoed.
import type { Static, TObject } from '@sinclair/typebox';
import { Ajv } from 'ajv';

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings: ${problems.join('; ')}`);
    this.name = 'SettingsError';
  }
}

interface SettingsOptions {
  /** Names whose values must never appear in an error (tokens, passwords, URIs with credentials). */
  secret?: ReadonlySet<string>;
  /** ajv string formats the schema uses. */
  formats?: Record<string, RegExp>;
}

interface ParsedSettings<T extends TObject> {
  value: Static<T>;
  /** Problems by setting name; the caller adds checks the schema cannot express, then calls `check()`. */
  problems: Map<string, string>;
  /** Throws one SettingsError naming every problem, if there is any. */
  check(): void;
}

const validators = new WeakMap<TObject, ReturnType<Ajv['compile']>>();

/**
 * Reads `schema`'s properties from `env`: blank means unset (so defaults apply), strings are trimmed
 * and coerced to the schema's numbers and booleans.
 */
export function parseSettings<T extends TObject>(schema: T, env: Record<string, string | undefined>, opts: SettingsOptions = {}): ParsedSettings<T> {
  let validate = validators.get(schema);
  if (!validate) {
    const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
    for (const [name, re] of Object.entries(opts.formats ?? {})) ajv.addFormat(name, re);
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') input[key] = value.trim();
  }
  const problems = new Map<string, string>();
  if (!validate(input)) {
    const errors = validate.errors ?? [];
    // A union reports each branch's failure before its own anyOf error; the anyOf says it best.
    const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath.slice(1)));
    for (const err of errors) {
      const name = err.keyword === 'required' ? String(err.params.missingProperty) : err.instancePath.slice(1);
      if (problems.has(name) || (unions.has(name) && err.keyword !== 'anyOf')) continue;
      if (err.keyword === 'required') {
        problems.set(name, `${name} is required`);
        continue;
      }
      const shown = opts.secret?.has(name) ? '' : ` (got ${JSON.stringify(env[name])})`;
      const why = err.keyword === 'anyOf' ? 'is not one of the allowed values' : (err.message ?? 'is invalid');
      problems.set(name, `${name} ${why}${shown}`);
    }
  }
  return {
    value: input as Static<T>,
    problems,
    check() {
      if (problems.size) throw new SettingsError([...problems.values()]);
    },
  };
}

/** The local-development flag: `.env.example` sets it for `make up`; production never does. */
export const LOCAL_DEVELOPMENT = 'LOCAL_DEVELOPMENT';

/**
 * The example secrets of `.env.example` (every one says `change-me`) are public: a part refuses to boot
 * with any of them unless LOCAL_DEVELOPMENT=true. Adds one problem per such setting, naming it only.
 */
export function refuseExampleSecrets(env: Record<string, string | undefined>, names: readonly string[], problems: Map<string, string>): void {
  if (/^(1|true|yes)$/i.test(env[LOCAL_DEVELOPMENT]?.trim() ?? '')) return;
  for (const name of names) {
    if (problems.has(name)) continue;
    if (/change-?me/i.test(env[name] ?? '')) {
      problems.set(name, `${name} is the example value from .env.example; set a secret of your own (or LOCAL_DEVELOPMENT=true on a developer machine)`);
    }
  }
}

/**
 * A part's boot: the settings `load` reads, or, when they are invalid, `<part>: <every problem>` on
 * stderr and exit code 2 before anything starts (any other error propagates).
 */
export function settingsOrExit<T>(part: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    process.stderr.write(`${part}: ${err.message}\n`);
    process.exit(2);
  }
}
