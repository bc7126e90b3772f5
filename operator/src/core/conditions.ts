// metav1.Condition handling: lastTransitionTime moves only when the status value changes.
import type { Condition } from '@voice-platform/schemas';

export function setCondition(
  existing: Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: Date,
): Condition[] {
  const list = [...(existing ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = prev && prev.status === next.status ? prev.lastTransitionTime : rfc3339(now);
  const cond: Condition = { ...next, message: next.message.slice(0, 32_000), lastTransitionTime };
  if (i >= 0) list[i] = cond;
  else list.push(cond);
  return list;
}

export function getCondition(list: Condition[] | undefined, type: string): Condition | undefined {
  return list?.find((c) => c.type === type);
}

/** RFC 3339 at second precision, the form metav1.Time serialises to. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
