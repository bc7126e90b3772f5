// Call recordings: a stereo WAV (left: caller, right: bot) on the call's own timeline, uploaded to
// object storage at `recordings/YYYY/MM/DD/{call_id}.wav`. A failed recording never fails the call.
// One module a job: recording/tracks.ts (a channel's samples to its temp file), recording/recorder.ts
// (the call's two tracks), recording/wav.ts (the stereo WAV), recording/store.ts (the upload),
// recording/sweep.ts (temp folders a dead worker left), recording/processor.ts (the pipeline's taps),
// recording/call.ts (a call's recording from start to upload, failures counted).
export { CallRecorder, RecordingError, RECORDINGS_SUBDIR, type FinishedRecording, type RecorderOptions, type RecordingStage } from './recording/recorder.js';
export { RecordingStore, recordingKey, saveRecording, type StorageOptions } from './recording/store.js';
export { sweepRecordings } from './recording/sweep.js';
export { CallRecording, type RecordingOutcome } from './recording/call.js';
