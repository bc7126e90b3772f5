// Request validation against the shared TypeBox schemas; failures name every bad field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema, Static } from '@sinclair/typebox';
import { ApiError } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
export const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

const cache = new WeakMap<TSchema, ValidateFunction>();
export function compiled(schema: TSchema): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

export interface FieldProblem {
  field: string;
  message: string;
}

export function fieldProblems(errors: ErrorObject[] | null | undefined): FieldProblem[] {
  const out: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    // anyOf/union noise: keep the most specific message per field.
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') field = [field, String(e.params.missingProperty)].filter(Boolean).join('.');
    if (e.keyword === 'required') message = 'is required';
    if (e.keyword === 'additionalProperties') {
      field = [field, String(e.params.additionalProperty)].filter(Boolean).join('.');
      message = 'is not allowed';
    }
    const id = `${field}|${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ field: field || '(body)', message });
  }
  return out;
}

export function check<T extends TSchema>(schema: T, value: unknown): Static<T> {
  const fn = compiled(schema);
  if (!fn(value)) throw new ApiError(422, 'validation_failed', 'the request is invalid', fieldProblems(fn.errors));
  return value as Static<T>;
}
