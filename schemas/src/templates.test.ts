// The template rule (docs/design.md, "Bots"): what a placeholder is, what is malformed, what renders.
import { parseTemplate, renderTemplate, renderWithResult, templateProblems } from './templates.js';

const names = (text: string) => parseTemplate(text).placeholders.map((p) => p.name);

describe('parseTemplate', () => {
  it('lists each placeholder with its position, repeated names once per use', () => {
    expect(parseTemplate('Hi {{a}}, {{ b }} and {{a}}')).toEqual({
      placeholders: [
        { name: 'a', start: 3, end: 8 },
        { name: 'b', start: 10, end: 17 },
        { name: 'a', start: 22, end: 27 },
      ],
      errors: [],
    });
  });

  it('allows white space inside the braces', () => {
    expect(names('{{name}}{{ name }}{{\tname\n}}{{  name}}')).toEqual(['name', 'name', 'name', 'name']);
  });

  it('reports placeholders whose name is not a variable name', () => {
    expect(parseTemplate('x {{}} {{ 1st }} {{a-b}} {{ok}}')).toEqual({
      placeholders: [{ name: 'ok', start: 25, end: 31 }],
      errors: [
        { start: 2, end: 6, message: '{{}} is not a valid variable name' },
        { start: 7, end: 16, message: '{{1st}} is not a valid variable name' },
        { start: 17, end: 24, message: '{{a-b}} is not a valid variable name' },
      ],
    });
    expect(parseTemplate(`{{${'a'.repeat(65)}}}`).errors).toHaveLength(1);
    expect(parseTemplate(`{{${'a'.repeat(64)}}}`).errors).toHaveLength(0);
  });

  it('leaves braces that form no placeholder as literal text: unbalanced, inner white space, no escapes', () => {
    expect(parseTemplate('{{a {{b c}} a}} }} {{ {')).toEqual({ placeholders: [], errors: [] });
    expect(names('{{{a}}}')).toEqual(['a']);
    expect(parseTemplate('{{{a}}}').placeholders[0]).toMatchObject({ start: 1, end: 6 });
    expect(names('\\{{a}} {{a}}}')).toEqual(['a', 'a']);
    expect(names('{a} {{a} {a}}')).toEqual([]);
  });
});

describe('renderTemplate', () => {
  it('replaces placeholders with their values, with or without white space', () => {
    expect(renderTemplate('{{ name }} owes {{amount}}', { name: 'Sam', amount: '12 EUR' })).toBe('Sam owes 12 EUR');
    expect(renderTemplate('{{a}}{{a}}', { a: 'x' })).toBe('xx');
  });

  it('renders a variable the call does not carry (an optional one left out) as empty text', () => {
    expect(renderTemplate('Hi {{name}} and {{other}}!', { name: 'Ann' })).toBe('Hi Ann and !');
  });

  it('uses own properties only: names like Object.prototype members render as given or empty', () => {
    expect(renderTemplate('Hi {{constructor}}!', {})).toBe('Hi !');
    expect(renderTemplate('{{toString}}{{__proto__}}{{hasOwnProperty}}', {})).toBe('');
    expect(renderTemplate('Hi {{constructor}}!', { constructor: 'Ada' })).toBe('Hi Ada!');
  });

  it('keeps literal braces as written and does not re-read values as templates', () => {
    expect(renderTemplate('{{{a}}} {{a b}} {{a', { a: 'x' })).toBe('{x} {{a b}} {{a');
    expect(renderTemplate('{{a}}', { a: '{{b}}', b: 'no' })).toBe('{{b}}');
    expect(renderTemplate('{{a}}', { a: '$&$1' })).toBe('$&$1');
  });
});

describe('templateProblems', () => {
  const bot = {
    variables: [{ name: 'customer_name' }, { name: 'amount' }],
    prompt: 'Remind {{customer_name}} of {{ amount }}',
    greeting: 'Hello {{customer_name}}',
    policy: { intents: [{ name: 'a', examples: ['x'], reply: 'Owed: {{amount}}' }], fallback: { reply: 'Sorry?' } },
  };

  it('accepts templates that name only declared variables', () => {
    expect(templateProblems(bot)).toEqual([]);
    expect(templateProblems({})).toEqual([]);
  });

  it('reports duplicates, then undeclared and malformed placeholders per field in text order', () => {
    expect(
      templateProblems({
        variables: [{ name: 'a' }, { name: 'a' }],
        prompt: '{{ghost}} {{1x}} {{ghost}} {{a}}',
        greeting: '{{}}',
        policy: { intents: [{ name: 'i', examples: ['x'], reply: '{{nope}}' }], fallback: { reply: '{{also}}' } },
      }),
    ).toEqual([
      { field: 'variables.1.name', message: 'a is declared twice' },
      { field: 'prompt', message: '{{ghost}} is not a declared variable' },
      { field: 'prompt', message: '{{1x}} is not a valid variable name' },
      { field: 'prompt', message: '{{ghost}} is not a declared variable' },
      { field: 'greeting', message: '{{}} is not a valid variable name' },
      { field: 'policy.intents.0.reply', message: '{{nope}} is not a declared variable' },
      { field: 'policy.fallback.reply', message: '{{also}} is not a declared variable' },
    ]);
  });

  it('{{digits}} in policy templates, {{result.…}} in the reply of an intent with an action: nowhere else', () => {
    expect(
      templateProblems({
        variables: [{ name: 'name' }],
        prompt: '{{digits}} {{result.ref}}',
        policy: {
          intents: [
            { name: 'act', examples: ['x'], action: { tool: 't', arguments: { who: '{{name}} {{digits}}', bad: '{{result.ref}}' } }, reply: 'Ref {{result.ref}} {{result.a.b}} {{digits}}', on_error_reply: 'No {{result.x}}' },
            { name: 'plain', examples: ['y'], reply: '{{result.ref}} {{digits}}' },
          ],
          fallback: { reply: '{{digits}}' },
        },
      }),
    ).toEqual([
      { field: 'prompt', message: '{{digits}} is not a declared variable' },
      { field: 'prompt', message: '{{result.ref}} is only for the reply of an intent with an action' },
      { field: 'policy.intents.0.action.arguments.bad', message: '{{result.ref}} is only for the reply of an intent with an action' },
      { field: 'policy.intents.0.on_error_reply', message: '{{result.x}} is only for the reply of an intent with an action' },
      { field: 'policy.intents.1.reply', message: '{{result.ref}} is only for the reply of an intent with an action' },
    ]);
  });

  it('renders {{result.<path>}} from a JSON answer: nested keys, objects as JSON, missing paths empty', () => {
    const result = { reference: 'PTP-7', due: { date: '2026-12-01' }, list: [1, 2], none: null };
    expect(renderWithResult('{{result.reference}} {{result.due.date}} {{result.due}} {{result.list}} [{{result.none}}] [{{result.gone.deeper}}] {{name}}', { name: 'Sam' }, result)).toBe(
      'PTP-7 2026-12-01 {"date":"2026-12-01"} [1,2] [] [] Sam',
    );
  });
});
