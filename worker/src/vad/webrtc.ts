// WebRTC VAD (libfvad compiled to WebAssembly, shipped inside the npm package: no native build, no
// download). One WASM module per process, one detector state per call.
import createFvadModule from '@echogarden/fvad-wasm';
import type { VadEngine } from './vad.js';

interface FvadModule {
  _fvad_new(): number;
  _fvad_free(h: number): void;
  _fvad_set_mode(h: number, mode: number): number;
  _fvad_set_sample_rate(h: number, rate: number): number;
  _fvad_process(h: number, ptr: number, samples: number): number;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  HEAP16: Int16Array;
}

let modulePromise: Promise<FvadModule> | null = null;
const loadModule = (): Promise<FvadModule> => (modulePromise ??= (createFvadModule as unknown as () => Promise<FvadModule>)());

/** Aggressiveness 0 (permissive) … 3 (strict); 3 keeps line noise from barging in. */
export async function createWebRtcVad(mode: 0 | 1 | 2 | 3 = 3, sampleRate: 8000 | 16000 | 32000 | 48000 = 16000): Promise<VadEngine> {
  const m = await loadModule();
  const handle = m._fvad_new();
  if (!handle) throw new Error('fvad_new failed');
  if (m._fvad_set_mode(handle, mode) !== 0 || m._fvad_set_sample_rate(handle, sampleRate) !== 0) {
    m._fvad_free(handle);
    throw new Error('fvad rejected its settings');
  }
  const frameMs = 20;
  const samples = (sampleRate * frameMs) / 1000;
  const ptr = m._malloc(samples * 2);
  let closed = false;
  return {
    name: 'webrtc',
    sampleRate,
    frameMs,
    isSpeech(frame: Int16Array): boolean {
      if (closed) return false;
      m.HEAP16.set(frame.subarray(0, samples), ptr >> 1);
      const r = m._fvad_process(handle, ptr, samples);
      if (r < 0) throw new Error('fvad_process failed');
      return r === 1;
    },
    close() {
      if (closed) return;
      closed = true;
      m._free(ptr);
      m._fvad_free(handle);
    },
  };
}
