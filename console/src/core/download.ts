// Files the API answers with the admin token (a call's recording, a campaign's CSV), in the browser: audio
// elements and links cannot send an Authorization header, so the page fetches the file (api.ts) and hands it
// on as an object URL (`blob:`, which the Content-Security-Policy allows for media: csp.js), revoked once it
// is no longer shown. A long recording is fetched only on request: the whole file sits in the page's memory.

/** Recordings up to this size are fetched as soon as the call page shows them (about 13 minutes of a stereo 16 kHz call). */
export const AUTO_LOAD_RECORDING_BYTES = 50 * 1024 * 1024;

/** `1.2 MB`, `850 kB`, `312 bytes`. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} ${n === 1 ? 'byte' : 'bytes'}`;
  if (n < 1_000_000) return `${Math.round(n / 1000)} kB`;
  if (n < 1_000_000_000) return `${(n / 1_000_000).toFixed(1)} MB`;
  return `${(n / 1_000_000_000).toFixed(1)} GB`;
}

/** The size a HEAD answer gives (`Content-Length`), or null when it gives none. */
export function contentLength(headers: Pick<Headers, 'get'>): number | null {
  const raw = headers.get('content-length');
  if (raw === null || !/^[0-9]+$/.test(raw.trim())) return null;
  return Number(raw);
}

/** Whether the call page fetches the recording at once (small, or size unknown) or waits for a click. */
export const autoLoadRecording = (size: number | null): boolean => size === null || size <= AUTO_LOAD_RECORDING_BYTES;

/**
 * The file name a `Content-Disposition` header gives (`filename*=UTF-8''…` before `filename="…"`), made safe
 * to save (no path, no control characters), else `fallback`.
 */
export function attachmentFilename(disposition: string | null, fallback: string): string {
  if (!disposition) return fallback;
  let name: string | null = null;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition);
  if (star) {
    try {
      name = decodeURIComponent(star[2]!.trim());
    } catch {
      name = null;
    }
  }
  if (name === null) {
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(disposition);
    if (plain) name = plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2]!.trim();
  }
  const safe = (name ?? '').replace(/[\\/\u0000-\u001f\u007f]/g, '_').replace(/^\.+/, '').trim();
  return safe || fallback;
}

/** What makes and revokes object URLs: the page's URL, or a test's. */
export interface ObjectUrls {
  createObjectURL(blob: Blob): string;
  revokeObjectURL(url: string): void;
}

/** One object URL shown at a time: a new one revokes the one before, `clear()` the last (the page is left). */
export class ObjectUrlSlot {
  private current: string | null = null;
  constructor(private readonly urls: ObjectUrls = URL) {}

  get url(): string | null {
    return this.current;
  }

  set(blob: Blob): string {
    this.clear();
    this.current = this.urls.createObjectURL(blob);
    return this.current;
  }

  clear(): void {
    if (this.current) this.urls.revokeObjectURL(this.current);
    this.current = null;
  }
}

/** Saves a blob as a file the browser downloads (a link with `download`, clicked, its URL revoked after). */
export function saveBlob(blob: Blob, filename: string, doc: Document = document, urls: ObjectUrls = URL): void {
  const url = urls.createObjectURL(blob);
  const a = doc.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.style.display = 'none';
  doc.body.append(a);
  a.click();
  a.remove();
  // After the click has started the download (revoking at once can cancel it in some browsers).
  setTimeout(() => urls.revokeObjectURL(url), 60_000);
}
