// An API error body (`{error:{code,message,details?}}`) as one sentence for the administrator.

/** An error body's message as one sentence, with field details or variable lists when given. */
export function readableMessage(code: string, message: string, details: unknown): string {
  const text = message || code.replace(/_/g, ' ');
  const sentence = `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
  if (Array.isArray(details) && details.length) {
    const parts = (details as Array<{ field?: unknown; message?: unknown }>)
      .filter((d) => typeof d?.field === 'string' && typeof d.message === 'string')
      .map((d) => `${String(d.field)} ${String(d.message)}`);
    if (parts.length) return `${sentence}: ${parts.join('; ')}.`;
  }
  if (details && typeof details === 'object' && ('missing' in details || 'unknown' in details)) {
    const d = details as { missing?: string[]; unknown?: string[] };
    const parts = [d.missing?.length ? `missing ${d.missing.join(', ')}` : '', d.unknown?.length ? `unknown ${d.unknown.join(', ')}` : ''].filter(Boolean);
    if (parts.length) return `${sentence} (${parts.join('; ')}).`;
  }
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}
