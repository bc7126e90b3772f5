// The shape every real service of the launcher has, and the base for those made of processes.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { freePort, killGroup, startProcess, type ManagedProcess } from './process.js';

export type ServiceName = 'mongodb' | 'redis' | 'minio' | 'kube' | 'livekit' | 'phone' | 'jaeger';
export const allServices: ServiceName[] = ['mongodb', 'redis', 'minio', 'kube', 'livekit', 'phone', 'jaeger'];

export interface Service {
  readonly name: ServiceName;
  /** Variables that point a client at this service (MONGODB_URI, REDIS_URL, …). */
  readonly env: Record<string, string>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP to its processes: they keep their sockets open but answer nothing (a stalled server), until thaw(). */
  freeze(): void;
  /** SIGCONT: a frozen service carries on where it stopped. */
  thaw(): void;
  /** Live processes, for the guardian that cleans up after an interrupted run. */
  processes(): ManagedProcess[];
}

export interface ServiceOptions {
  /** Folder for this service's data and log. */
  dir: string;
  /** Fixed ports (the `make up` stack); otherwise free ephemeral ports. */
  ports?: number[];
  persistent?: boolean;
  /** Redis: keep the data across a stop and start (append-only file), as the chart's Redis does. */
  durable?: boolean;
}

type Ports<N extends number, T extends number[] = []> = T['length'] extends N ? T : Ports<N, [...T, number]>;

/** `count` ports: the fixed ones given, free ones for the rest. */
export async function ports<N extends number>(opts: ServiceOptions, count: N): Promise<Ports<N>> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(opts.ports?.[i] ?? (await freePort()));
  return out as Ports<N>;
}

/** Base for services made of processes started in order and stopped in reverse. */
export abstract class ProcessService implements Service {
  abstract readonly name: ServiceName;
  abstract readonly env: Record<string, string>;
  protected procs: ManagedProcess[] = [];
  /** How long a process has between SIGTERM and SIGKILL. */
  protected readonly stopGraceMs: number = 10_000;
  constructor(protected readonly opts: ServiceOptions) {
    mkdirSync(opts.dir, { recursive: true });
  }
  protected launch(name: string, command: string, args: string[], env?: NodeJS.ProcessEnv): ManagedProcess {
    const proc = startProcess(name, command, args, {
      env: { ...process.env, ...env },
      cwd: this.opts.dir,
      logFile: path.join(this.opts.dir, `${name}.log`),
      persistent: this.opts.persistent,
    });
    this.procs.push(proc);
    return proc;
  }
  abstract start(): Promise<void>;
  async stop(): Promise<void> {
    this.thaw(); // a stopped process would not act on SIGTERM, only on the SIGKILL after the grace time
    for (const proc of [...this.procs].reverse()) await proc.stop(this.stopGraceMs);
    this.procs = [];
  }
  freeze(): void {
    for (const proc of this.processes()) killGroup(proc.pid, 'SIGSTOP');
  }
  thaw(): void {
    for (const proc of this.processes()) killGroup(proc.pid, 'SIGCONT');
  }
  processes(): ManagedProcess[] {
    return this.procs.filter((p) => p.isRunning());
  }
}

