// Messages between the worker (spawner.ts) and its spawner process (spawner-child.ts). The channel uses
// `serialization: 'advanced'` (structured clone), so stdin and stdout bytes travel as binary.

export type ParentMessage =
  /** `pipe`: stdin stays open for `write` messages (`end` closes it); else `stdin` is written whole, or /dev/null. */
  | { t: 'run'; id: number; command: string; args: string[]; stdin?: Uint8Array | string; pipe?: boolean }
  | { t: 'write'; id: number; data: Uint8Array }
  | { t: 'end'; id: number }
  | { t: 'kill'; id: number };

export type ChildMessage =
  | { t: 'ready'; pid: number }
  | { t: 'spawned'; id: number; pid: number }
  /** The process could not start (e.g. ENOENT); no 'exit' follows. */
  | { t: 'failed'; id: number; message: string; errno?: string }
  | { t: 'out'; id: number; data: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null; stderr: string };
