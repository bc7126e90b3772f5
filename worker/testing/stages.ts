// A provider under test, run the way a call runs it: inside its stage's processor, with the stage's
// retries (providers/retry.ts). What the stage passed on and the error frame it raised come back.
import { concatPcm } from '#worker/audio/pcm.js';
import type { Frame, FrameOf } from '#worker/pipeline/frames.js';
import { Pipeline } from '#worker/pipeline/pipeline.js';
import { retryPolicy, type RetryPolicy } from '#worker/providers/retry.js';
import { LlmProcessor, type LlmProvider, type LlmTools } from '#worker/llm/llm.js';
import { TtsProcessor, type TtsProvider } from '#worker/tts/tts.js';

export interface StageRun {
  /** The error frame the stage raised (null: none). */
  error: FrameOf<'error'> | null;
  /** Everything that left the stage downstream, in order. */
  frames: Frame[];
}

async function run(processor: LlmProcessor | TtsProcessor, input: Frame[]): Promise<StageRun> {
  const out: StageRun = { error: null, frames: [] };
  const pipeline = new Pipeline([processor], {
    upstream: (f) => {
      if (f.kind === 'error') out.error = f;
    },
    downstream: (f) => out.frames.push(f),
  });
  for (const f of input) pipeline.push(f);
  await pipeline.idle();
  return out;
}

/** A TTS stage at the provider's own rate speaking `text`: the audio it passed on, sample for sample. */
export async function ttsStage(provider: TtsProvider, text: string, policy: RetryPolicy = retryPolicy(2)): Promise<StageRun & { audio: Int16Array }> {
  const r = await run(new TtsProcessor(provider, provider.sampleRate, policy), [{ kind: 'text', text }]);
  return { ...r, audio: concatPcm(r.frames.flatMap((f) => (f.kind === 'audio_out' ? [f.pcm] : []))) };
}

/** An LLM stage (with the call's tools, if given) answering `user`: the sentences it passed on to the TTS. */
export async function llmStage(provider: LlmProvider, user: string, policy: RetryPolicy = retryPolicy(2), tools: LlmTools | null = null): Promise<StageRun & { sentences: string[] }> {
  const r = await run(new LlmProcessor(provider, '', policy, tools), [{ kind: 'transcript', role: 'user', text: user, final: true }]);
  return { ...r, sentences: r.frames.flatMap((f) => (f.kind === 'text' ? [f.text] : [])) };
}
