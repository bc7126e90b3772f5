// Child processes of the launcher: each in its own process group (so a whole service tree can be
// signalled), output to a log file, with readiness polling that fails fast if the process dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import dgram from 'node:dgram';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or signal) when the process ends. */
  readonly exited: Promise<number | string>;
  isRunning(): boolean;
  /** SIGTERM to the process group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  /** Keep running after this Node process exits (the `make up` stack). */
  persistent?: boolean;
}

export function startProcess(name: string, command: string, args: string[], opts: StartOptions): ManagedProcess {
  const log = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', log, log],
      detached: true, // own process group: Ctrl-C on the test run does not race our own cleanup
    });
  } finally {
    closeSync(log);
  }
  if (child.pid === undefined) throw new Error(`${name}: failed to start ${command}`);
  if (opts.persistent) child.unref();
  const pid = child.pid;
  let running = true;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (err) => {
      running = false;
      resolve(err.message);
    });
  });
  return {
    name,
    pid,
    logFile: opts.logFile,
    exited,
    isRunning: () => running,
    async stop(graceMs = 10_000) {
      if (!running) return;
      killGroup(pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
      ]);
      clearTimeout(timer); // a pending grace timer would keep the test runner alive
      if (!done) {
        killGroup(pid, 'SIGKILL');
        await exited;
      }
    },
  };
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** True while a process with this pid exists (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function tailLog(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

interface WaitOptions {
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Fail at once, with its log, if this process ends while waiting. */
  proc?: ManagedProcess;
}

/** Polls `check` until it returns true; errors thrown by `check` count as "not yet". */
export async function waitUntil(check: () => Promise<boolean> | boolean, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError = '';
  for (;;) {
    if (opts.proc && !opts.proc.isRunning()) {
      const code = await opts.proc.exited;
      throw new Error(`${opts.what}: process exited (${code}) before it was ready\n${tailLog(opts.proc.logFile)}`);
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      const log = opts.proc ? `\n${tailLog(opts.proc.logFile)}` : '';
      throw new Error(`${opts.what}: not ready after ${opts.timeoutMs ?? 60_000} ms${lastError ? ` (${lastError})` : ''}${log}`);
    }
    await delay(opts.intervalMs ?? 100);
  }
}

/**
 * A port free on loopback for TCP and UDP alike (SIP and media listen on UDP), from the kernel's ephemeral
 * range (never the `make up` ports, nor LiveKit's RTP ranges below it).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await freeTcpPort();
    if ((await udpFree(port)) || attempt >= 20) return port;
  }
}

function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.unref();
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

export function tcpOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Redis answers PING (the port may be open before Redis is ready). */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy(new Error('timeout')));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG'));
      }
    });
    socket.once('error', reject);
  });
}
