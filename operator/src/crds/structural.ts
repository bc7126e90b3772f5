// TypeBox/JSON Schema → Kubernetes structural schema. The API server only accepts a subset of JSON
// Schema in a CRD (every node typed, no `additionalProperties: false`, no anyOf beyond int-or-string),
// so the shared schemas are translated here instead of being written a second time by hand.
type Json = Record<string, unknown>;

const DROPPED = new Set(['$id', '$schema', 'additionalProperties', 'patternProperties', 'anyOf']);

function isNullSchema(s: unknown): boolean {
  return typeof s === 'object' && s !== null && (s as Json).type === 'null';
}

export function toStructural(input: unknown): Json {
  // JSON round trip drops TypeBox's symbol keys (Kind, Optional).
  const schema = JSON.parse(JSON.stringify(input)) as Json;
  return convert(schema);
}

function convert(s: Json): Json {
  if (Array.isArray(s.anyOf)) {
    const variants = s.anyOf as Json[];
    if (s['x-kubernetes-int-or-string'] === true) return { ...s };
    const nonNull = variants.filter((v) => !isNullSchema(v));
    if (nonNull.length === 1 && nonNull.length < variants.length) {
      const { anyOf: _anyOf, ...rest } = s;
      return { ...convert({ ...nonNull[0]!, ...rest }), nullable: true };
    }
    // A union of string literals (TypeBox's enum) becomes an enum.
    if (variants.every((v) => typeof v.const === 'string')) {
      const { anyOf: _anyOf, ...rest } = s;
      return convert({ ...rest, type: 'string', enum: variants.map((v) => v.const) });
    }
    // A scalar of several types (a string, number or boolean: a post-call analysis value) takes any value here;
    // the backend checks it.
    if (variants.every((v) => ['string', 'number', 'integer', 'boolean'].includes(v.type as string) && v.const === undefined)) {
      const { anyOf: _anyOf, ...rest } = s;
      return { ...(typeof rest.description === 'string' ? { description: rest.description } : {}), 'x-kubernetes-preserve-unknown-fields': true };
    }
    // A union of objects keyed apart (a flow transition's `when`): one object with every variant's properties, none
    // required; the backend checks that exactly one variant is given.
    if (variants.every((v) => v.type === 'object' && typeof v.properties === 'object')) {
      const properties = Object.fromEntries(variants.flatMap((v) => Object.entries(v.properties as Record<string, Json>)).map(([k, v]) => [k, convert(v)]));
      return { type: 'object', ...(typeof s.description === 'string' ? { description: s.description } : {}), properties };
    }
    throw new Error(`unsupported anyOf in CRD schema: ${JSON.stringify(s).slice(0, 200)}`);
  }
  if (s.type === undefined && Object.keys(s).filter((k) => k !== 'description').length === 0) {
    // Type.Unknown(): any JSON value.
    return { ...s, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(s)) {
    if (DROPPED.has(key) || key === 'const') continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, Json>).map(([k, v]) => [k, convert(v)]));
    } else if (key === 'items') {
      out.items = convert(value as Json);
    } else {
      out[key] = value;
    }
  }
  if (s.const !== undefined) out.enum = [s.const];
  // JSON Schema's numeric exclusive bounds are OpenAPI v3.0 booleans beside minimum/maximum in a CRD.
  if (typeof s.exclusiveMinimum === 'number') Object.assign(out, { minimum: s.exclusiveMinimum, exclusiveMinimum: true });
  if (typeof s.exclusiveMaximum === 'number') Object.assign(out, { maximum: s.exclusiveMaximum, exclusiveMaximum: true });
  // A defaulted field is filled in by the API server, so users may leave it out.
  if (Array.isArray(s.required) && s.properties) {
    const props = s.properties as Record<string, Json>;
    const required = (s.required as string[]).filter((k) => props[k]?.default === undefined);
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  if (s.patternProperties) {
    const values = Object.values(s.patternProperties as Record<string, Json>);
    const value = convert(values[0] ?? {});
    if (value['x-kubernetes-preserve-unknown-fields'] === true && value.type === undefined) {
      out['x-kubernetes-preserve-unknown-fields'] = true;
    } else {
      out.additionalProperties = value;
    }
  }
  return out;
}
