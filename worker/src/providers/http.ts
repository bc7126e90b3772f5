// One attempt of a streaming HTTP provider (OpenAI speech and chat, ElevenLabs): POST a JSON body and
// read the response body as it streams, with an idle timeout; every failure is a ProviderError.
import { PcmBytes } from '../audio/pcm.js';
import { httpError, ProviderError, transportError, type Stage } from './errors.js';

export interface StreamPost {
  stage: Stage;
  /** Names the request in messages ("audio/speech"). */
  what: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  /** No answer, or no data for this long: `<stage>_timeout`. */
  timeoutMs: number;
}

/** The response body's chunks as they arrive. */
export async function* streamPost(req: StreamPost): AsyncIterable<Uint8Array> {
  const ctrl = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const onParent = () => ctrl.abort(req.signal.reason);
  req.signal.addEventListener('abort', onParent, { once: true });
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      ctrl.abort();
    }, req.timeoutMs);
  };
  const timeout = () => new ProviderError(req.stage, 'timeout', `${req.what}: no data for ${req.timeoutMs} ms`);
  let started = false;
  touch();
  try {
    const res = await fetch(req.url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...req.headers }, body: JSON.stringify(req.body), signal: ctrl.signal });
    if (!res.ok || !res.body) throw httpError(req.stage, req.what, res.status, await res.text().catch(() => ''));
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      touch();
      started = true;
      yield chunk;
    }
  } catch (err) {
    if (req.signal.aborted) return; // the stage stopped it (barge-in, hang-up)
    throw timedOut ? timeout() : transportError(req.stage, req.what, err, { timedOut, started });
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener('abort', onParent);
  }
}

/** The response body as PCM16LE samples (a sample split across chunks is carried over). */
export async function* streamPostPcm(req: StreamPost): AsyncIterable<Int16Array> {
  const pcm = new PcmBytes();
  for await (const chunk of streamPost(req)) {
    const samples = pcm.push(chunk);
    if (samples.length) yield samples;
  }
}
