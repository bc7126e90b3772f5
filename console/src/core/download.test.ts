// Files fetched with the admin token and handed on as object URLs: the saved file's name, the recording's
// size and when the call page reads it unasked, one object URL at a time (revoked when replaced or left),
// and the download link a CSV is saved through.
import { jest } from '@jest/globals';
import { attachmentFilename, AUTO_LOAD_RECORDING_BYTES, autoLoadRecording, contentLength, formatBytes, ObjectUrlSlot, saveBlob, type ObjectUrls } from './download.js';

/** Object URLs numbered as made, with what was revoked. */
function fakeUrls(): ObjectUrls & { made: Blob[]; revoked: string[] } {
  const made: Blob[] = [];
  const revoked: string[] = [];
  return {
    made,
    revoked,
    createObjectURL: (blob: Blob) => {
      made.push(blob);
      return `blob:test/${made.length}`;
    },
    revokeObjectURL: (url: string) => void revoked.push(url),
  };
}

describe('attachmentFilename', () => {
  it("takes the backend's filename, quoted or not, and prefers filename*", () => {
    expect(attachmentFilename('attachment; filename="campaign-abc-contacts.csv"', 'x.csv')).toBe('campaign-abc-contacts.csv');
    expect(attachmentFilename('attachment; filename=plain.csv', 'x.csv')).toBe('plain.csv');
    expect(attachmentFilename(`attachment; filename="fallback.csv"; filename*=UTF-8''r%C3%A9sultats.csv`, 'x.csv')).toBe('résultats.csv');
    expect(attachmentFilename('attachment; filename="say \\"hi\\".csv"', 'x.csv')).toBe('say "hi".csv');
  });

  it('falls back without a usable name, and never keeps a path or control characters', () => {
    expect(attachmentFilename(null, 'x.csv')).toBe('x.csv');
    expect(attachmentFilename('attachment', 'x.csv')).toBe('x.csv');
    expect(attachmentFilename('attachment; filename=""', 'x.csv')).toBe('x.csv');
    expect(attachmentFilename(`attachment; filename*=UTF-8''%E0%A4%A`, 'x.csv')).toBe('x.csv'); // bad escapes, no plain name
    expect(attachmentFilename('attachment; filename="../../etc/passwd"', 'x.csv')).toBe('_.._etc_passwd');
    expect(attachmentFilename('attachment; filename="a\\\\b\u0007.csv"', 'x.csv')).toBe('a_b_.csv');
  });
});

describe('the recording size', () => {
  it("reads Content-Length, or nothing when it is missing or not a number", () => {
    expect(contentLength(new Headers({ 'Content-Length': '32044' }))).toBe(32044);
    expect(contentLength(new Headers())).toBeNull();
    expect(contentLength(new Headers({ 'Content-Length': 'lots' }))).toBeNull();
  });

  it('is read unasked up to the limit (or when unknown), on request beyond it', () => {
    expect(autoLoadRecording(32044)).toBe(true);
    expect(autoLoadRecording(AUTO_LOAD_RECORDING_BYTES)).toBe(true);
    expect(autoLoadRecording(AUTO_LOAD_RECORDING_BYTES + 1)).toBe(false);
    expect(autoLoadRecording(null)).toBe(true);
  });

  it('is shown in words', () => {
    expect([1, 312, 850_000, 1_234_567, 460_000_000, 2_500_000_000].map(formatBytes)).toEqual(['1 byte', '312 bytes', '850 kB', '1.2 MB', '460.0 MB', '2.5 GB']);
  });
});

describe('ObjectUrlSlot', () => {
  it('holds one object URL: a new one revokes the one before, clear() the last', () => {
    const urls = fakeUrls();
    const slot = new ObjectUrlSlot(urls);
    expect(slot.url).toBeNull();
    const a = new Blob(['RIFF'], { type: 'audio/wav' });
    expect(slot.set(a)).toBe('blob:test/1');
    expect(urls.made).toEqual([a]);
    slot.set(new Blob(['RIFF2'], { type: 'audio/wav' }));
    expect([slot.url, urls.revoked]).toEqual(['blob:test/2', ['blob:test/1']]);
    slot.clear();
    slot.clear(); // nothing left to revoke
    expect([slot.url, urls.revoked]).toEqual([null, ['blob:test/1', 'blob:test/2']]);
  });

  it("makes real object URLs with the browser's URL by default", async () => {
    const slot = new ObjectUrlSlot();
    const url = slot.set(new Blob(['RIFF'], { type: 'audio/wav' }));
    expect(url).toMatch(/^blob:/);
    slot.clear();
  });
});

describe('saveBlob', () => {
  it('clicks a hidden download link to the blob, removes it, and revokes the URL later', () => {
    jest.useFakeTimers();
    try {
      const urls = fakeUrls();
      const clicked: Array<{ href: string; download: string; inDocument: boolean }> = [];
      const children = new Set<unknown>();
      const link = {
        href: '',
        download: '',
        rel: '',
        style: { display: '' },
        click() {
          clicked.push({ href: this.href, download: this.download, inDocument: children.has(this) });
        },
        remove() {
          children.delete(this);
        },
      };
      const doc = { createElement: (tag: string) => (tag === 'a' ? link : null), body: { append: (el: unknown) => children.add(el) } } as unknown as Document;
      const csv = new Blob(['contact_id\r\n'], { type: 'text/csv' });
      saveBlob(csv, 'campaign-abc-contacts.csv', doc, urls);
      expect(clicked).toEqual([{ href: 'blob:test/1', download: 'campaign-abc-contacts.csv', inDocument: true }]);
      expect([urls.made, children.size, link.style.display]).toEqual([[csv], 0, 'none']);
      expect(urls.revoked).toEqual([]);
      jest.advanceTimersByTime(60_000);
      expect(urls.revoked).toEqual(['blob:test/1']);
    } finally {
      jest.useRealTimers();
    }
  });
});
