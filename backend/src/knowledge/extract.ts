// A knowledge document's text, by its media type, and its chunks. A body that is not what its type says (a
// "PDF" that does not parse as one, text that is not UTF-8) is a KnowledgeContentError: the route answers 422
// and stores nothing.
import { extractText, getDocumentProxy } from 'unpdf';
import type { KnowledgeMediaType } from '@voice-platform/schemas';

export class KnowledgeContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KnowledgeContentError';
  }
}

/** A chunk's target size in characters: a passage a model (or the scripted policy) can say in a turn or two. */
export const CHUNK_CHARS = 600;

const utf8 = (body: Buffer): string => {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    if (text.includes('\u0000')) throw new Error('NUL');
    return text;
  } catch {
    throw new KnowledgeContentError('is not UTF-8 text');
  }
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** HTML's visible text: scripts, styles and tags out, block ends as paragraph breaks, entities decoded. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template)[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/(p|div|li|h[1-6]|tr|section|article|br)\s*>|<br\s*\/?>/gi, '\n\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x?[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const n = e[1]?.toLowerCase() === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : ' ';
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}

/** Markdown as the words it says: headings' and emphasis' marks, code fences and link targets out. */
function markdownText(md: string): string {
  return md
    .replace(/```[^\n]*\n/g, '\n')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '')
    .replace(/[*_`~]{1,3}/g, '');
}

/** The document's text; a KnowledgeContentError when the body is not of its type. */
export async function documentText(body: Buffer, type: KnowledgeMediaType): Promise<string> {
  if (type === 'application/pdf') {
    if (body.subarray(0, 5).toString('latin1') !== '%PDF-') throw new KnowledgeContentError('is not a PDF (no %PDF- header)');
    try {
      // verbosity 0: pdf.js would print its warnings on the console (not our JSON log lines).
      const pdf = await getDocumentProxy(new Uint8Array(body), { verbosity: 0 });
      const { text } = await extractText(pdf, { mergePages: false });
      await pdf.cleanup?.();
      return (text as string[]).join('\n\n');
    } catch {
      throw new KnowledgeContentError('is not a readable PDF');
    }
  }
  const text = utf8(body);
  if (type === 'text/html') return htmlText(text);
  if (type === 'text/markdown') return markdownText(text);
  return text;
}

/** Paragraphs packed into chunks of about CHUNK_CHARS, split at sentence ends (a long sentence at words). */
export function chunkText(text: string, target = CHUNK_CHARS): string[] {
  const sentences = text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .flatMap((p) => [...(p.match(/[^.!?]+[.!?]+["')\]]*|[^.!?]+$/g) ?? [p])].map((s) => s.trim()).filter(Boolean).map((s) => ({ s, para: p })));
  const chunks: string[] = [];
  let cur = '';
  let para = '';
  const flush = () => {
    if (cur) chunks.push(cur);
    cur = '';
  };
  for (const { s, para: p } of sentences) {
    // A new paragraph starts a new chunk once this one is half full: passages keep to one topic.
    if (cur && (cur.length + 1 + s.length > target || (p !== para && cur.length >= target / 2))) flush();
    para = p;
    if (s.length > target) {
      for (const w of s.split(' ')) {
        if (cur && cur.length + 1 + w.length > target) flush();
        cur = cur ? `${cur} ${w}` : w.slice(0, target * 2);
      }
      continue;
    }
    cur = cur ? `${cur} ${s}` : s;
  }
  flush();
  return chunks;
}
