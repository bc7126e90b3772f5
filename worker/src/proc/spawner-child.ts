// The spawner process (see spawner.ts): runs the worker's provider processes so their fork() happens
// here, in a small process, instead of on the worker's event loop. It imports nothing but
// child_process to stay small: fork() cost grows with the forking process's RSS.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ChildMessage, ParentMessage } from './protocol.js';

/** Keep only the tail of stderr: it is for error messages, and a chatty binary must not grow memory. */
const MAX_STDERR_BYTES = 16 * 1024;

const running = new Map<number, ChildProcess>();

function send(msg: ChildMessage): void {
  // The worker is gone if the channel is closed; `disconnect` below cleans up. A worker killed (SIGKILL)
  // between the check and the write fails the write asynchronously (EPIPE): that too is `disconnect`'s.
  if (process.connected) process.send!(msg, undefined, undefined, () => undefined);
}

function run(msg: Extract<ParentMessage, { t: 'run' }>): void {
  const { id, command, args } = msg;
  let child: ChildProcess;
  try {
    child = spawn(command, args, { stdio: [msg.stdin === undefined && !msg.pipe ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  } catch (e) {
    send({ t: 'failed', id, message: e instanceof Error ? e.message : String(e), errno: (e as NodeJS.ErrnoException).code });
    return;
  }
  running.set(id, child);
  let started = false;
  let stderr = Buffer.alloc(0);
  child.once('spawn', () => {
    started = true;
    send({ t: 'spawned', id, pid: child.pid! });
  });
  child.once('error', (e: NodeJS.ErrnoException) => {
    // After a successful spawn an 'error' is a failed kill; 'close' still reports the exit.
    if (started) return;
    running.delete(id);
    send({ t: 'failed', id, message: e.message, errno: e.code });
  });
  child.stdout!.on('data', (d: Buffer) => send({ t: 'out', id, data: d }));
  child.stderr!.on('data', (d: Buffer) => {
    stderr = Buffer.concat([stderr, d]);
    if (stderr.length > MAX_STDERR_BYTES) stderr = stderr.subarray(stderr.length - MAX_STDERR_BYTES);
  });
  child.once('close', (code, signal) => {
    if (!started) return;
    running.delete(id);
    send({ t: 'exit', id, code, signal, stderr: stderr.toString('utf8') });
  });
  if (child.stdin) {
    child.stdin.on('error', () => undefined); // a binary that exits without reading stdin: EPIPE
    if (!msg.pipe) child.stdin.end(msg.stdin);
    else if (msg.stdin !== undefined) child.stdin.write(msg.stdin);
  }
}

process.on('message', (msg: ParentMessage) => {
  if (msg.t === 'run') run(msg);
  else if (msg.t === 'write') running.get(msg.id)?.stdin?.write(msg.data);
  else if (msg.t === 'end') running.get(msg.id)?.stdin?.end();
  else if (msg.t === 'kill') running.get(msg.id)?.kill('SIGKILL');
});

// The worker died or closed us: no process of ours may outlive it.
process.on('disconnect', () => {
  for (const child of running.values()) child.kill('SIGKILL');
  process.exit(0);
});

send({ t: 'ready', pid: process.pid });
