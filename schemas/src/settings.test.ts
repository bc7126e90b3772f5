import { Type } from '@sinclair/typebox';
import { parseSettings, SettingsError } from './settings.js';

const Schema = Type.Object({
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 8080 }),
  TOKEN: Type.String({ minLength: 16 }),
  DEBUG: Type.Boolean({ default: false }),
  MODE: Type.Union([Type.Literal('a'), Type.Literal('b')], { default: 'a' }),
});

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parseSettings(Schema, env, { secret: new Set(['TOKEN']) }).check();
    return [];
  } catch (err) {
    if (err instanceof SettingsError) return err.problems;
    throw err;
  }
};

describe('parseSettings', () => {
  it('applies defaults, trims, coerces, and treats blank as unset', () => {
    const { value, problems } = parseSettings(Schema, { TOKEN: '  0123456789abcdef ', DEBUG: 'true', PORT: ' ', MODE: '' });
    expect(problems.size).toBe(0);
    expect(value).toEqual({ PORT: 8080, TOKEN: '0123456789abcdef', DEBUG: true, MODE: 'a' });
  });

  it('names every problem at once and never echoes a secret', () => {
    const problems = problemsOf({ TOKEN: 'short-secret', PORT: '99999', MODE: 'c' });
    expect(problems).toEqual([
      'PORT must be <= 65535 (got "99999")',
      'TOKEN must NOT have fewer than 16 characters',
      'MODE is not one of the allowed values (got "c")',
    ]);
    expect(problems.join(' ')).not.toContain('short-secret');
    expect(problemsOf({})).toEqual(['TOKEN is required']);
  });
});
