// One call's recording from start to end: its recorder (the pipeline's taps write to it) and, when the
// call is over, the save (finish, upload, temp files removed) that yields the call record's
// recording_key or recording_error. Never throws: a failed recording never fails the call.
import type { Logger } from '../../core/logger.js';
import type { Metrics } from '../../core/metrics.js';
import { CallRecorder, RecordingError } from './recorder.js';
import { saveRecording, type RecordingStore } from './store.js';

export type RecordingMetrics = Pick<Metrics, 'recordingFailures' | 'recordingStageFailures'>;

/** Exactly one of the two is set. */
export interface RecordingOutcome {
  key: string | null;
  error: string | null;
}

export class CallRecording {
  readonly recorder: CallRecorder;

  /** `startMs`: the call's start (performance.now()), the recording's time zero; `dir`: its temp folder. */
  constructor(
    sampleRate: number,
    startMs: number,
    dir: string,
    private readonly metrics: RecordingMetrics,
    private readonly log: Logger,
  ) {
    this.recorder = new CallRecorder(sampleRate, startMs, {
      dir,
      // Logged and counted when it happens (it may be an hour before the call ends); reported at the end.
      onError: (err) => {
        metrics.recordingStageFailures.inc({ stage: 'disk' });
        log.error({ err: err.message, cause: err.cause instanceof Error ? err.cause.message : String(err.cause) }, 'recording write failed');
      },
    });
  }

  /** Uploads the call's WAV (up to `endMs`) to `key`; the outcome says where it went or why it is lost. */
  async save(store: RecordingStore | null, key: string, endMs: number): Promise<RecordingOutcome> {
    try {
      await saveRecording(this.recorder, store, key, endMs);
      return { key, error: null };
    } catch (err) {
      const e = err instanceof RecordingError ? err : new RecordingError('upload', err);
      if (e.stage === 'upload') {
        this.metrics.recordingFailures.inc();
        this.metrics.recordingStageFailures.inc({ stage: 'upload' });
        this.log.error({ err: e.message }, 'recording upload failed');
      } // a disk failure was logged and counted when it happened
      return { key: null, error: e.message };
    }
  }
}
