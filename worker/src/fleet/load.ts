// How busy this worker is, and how many more calls it can take without its live calls' turns slowing
// down (docs/design.md §15). A slot count alone admitted 3–6 times what a worker could serve; here the
// worker measures itself every second:
//   cpu   CPU time of the worker's process and its decoder children (the spawner's process tree, the live
//         decoder) over the CPU allowance (cgroup cpu.max / cfs quota, else the cores);
//   lag   the event loop's mean delay (it paces every call's audio in 20 ms frames);
//   queue the age of the oldest decode or synthesis waiting for its turn;
//   pressure the machine's CPU pressure (PSI): the share of time runnable tasks waited for a CPU, which the
//         worker's own CPU cannot show when LiveKit, the phone line and the stores share its cores.
// load = the highest of the four, 0–1. From the CPU each live call costs (measured while the calls are
// steady; an estimate before any call ran), `admittable` says how many more calls fit under LOAD_THRESHOLD.
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';

/** Where the CPU allowance was read from. */
export type AllowanceSource = 'setting' | 'cgroup' | 'cores';

export interface CpuAllowance {
  cores: number;
  source: AllowanceSource;
  /** Why the cgroup gave no limit (no cgroup files, or no quota set). */
  note?: string;
}

/** Linux clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on every mainstream kernel). */
const CLOCK_TICKS_PER_SECOND = 100;
/** A mean event-loop delay this long means the worker is full: audio frames are 20 ms, gaps over 100 ms are heard. */
const LAG_FULL_MS = 100;
/** A decode or synthesis waiting this long means the worker is full: the caller is already waiting for the reply. */
const QUEUE_FULL_MS = 1000;
/**
 * CPU pressure (PSI "some avg10": the share of the last 10 s in which a runnable task waited for a CPU) below this
 * is an ordinary busy machine; at PRESSURE_FULL_PCT everything on it, this worker's calls too, waits for the CPU.
 * It is what the worker's own CPU cannot show: on a machine shared with LiveKit, the phone line and the stores,
 * the worker's allowance is there on paper only once the others take it.
 */
const PRESSURE_FROM_PCT = 25;
const PRESSURE_FULL_PCT = 75;
/** The calls must have held steady this long before their CPU counts as what a call costs (ringing costs little). */
const STEADY_MS = 3000;

/**
 * The CPU cores this process may use: cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us` of its own
 * cgroup (the lowest limit on the way up), else the machine's cores.
 */
export async function readCpuAllowance(opts: { procRoot?: string; cgroupRoot?: string; cores?: number } = {}): Promise<CpuAllowance> {
  const procRoot = opts.procRoot ?? '/proc';
  const cgroupRoot = opts.cgroupRoot ?? '/sys/fs/cgroup';
  const cores = opts.cores ?? availableParallelism();
  let membership: string;
  try {
    membership = await readFile(`${procRoot}/self/cgroup`, 'utf8');
  } catch {
    return { cores, source: 'cores', note: `${procRoot}/self/cgroup unreadable` };
  }
  const limits: number[] = [];
  let readAny = false;
  for (const line of membership.split('\n')) {
    const [id, controllers, rel] = line.split(':');
    if (rel === undefined) continue;
    // v2: "0::/path" and cpu.max; v1: "N:cpu,cpuacct:/path" and the cfs files under the cpu controller's mount.
    const v2 = id === '0' && controllers === '';
    if (!v2 && !controllers!.split(',').includes('cpu')) continue;
    const mounts = v2 ? [cgroupRoot] : [`${cgroupRoot}/${controllers}`, `${cgroupRoot}/cpu`, `${cgroupRoot}/cpu,cpuacct`];
    for (const mount of mounts) {
      // Inside a container the cgroup's own directory is often the mount's root: try the path, its parents, the root.
      const parts = rel.split('/').filter(Boolean);
      for (let n = parts.length; n >= 0; n--) {
        const dir = [mount, ...parts.slice(0, n)].join('/');
        const limit = v2 ? await readV2(dir) : await readV1(dir);
        if (limit === undefined) continue;
        readAny = true;
        if (limit !== null) limits.push(limit);
      }
      if (readAny) break;
    }
  }
  if (limits.length) return { cores: Math.min(cores, ...limits), source: 'cgroup' };
  return { cores, source: 'cores', note: readAny ? 'the cgroup sets no CPU quota' : 'no cgroup CPU controller readable' };
}

/** Cores allowed by a v2 cpu.max ("max 100000" → null); undefined when the file is not there. */
async function readV2(dir: string): Promise<number | null | undefined> {
  const raw = await readFile(`${dir}/cpu.max`, 'utf8').catch(() => undefined);
  if (raw === undefined) return undefined;
  const [quota, period] = raw.trim().split(/\s+/);
  const q = Number(quota);
  const p = Number(period);
  return quota === 'max' || !(q > 0 && p > 0) ? null : q / p;
}

async function readV1(dir: string): Promise<number | null | undefined> {
  const [quota, period] = await Promise.all([readFile(`${dir}/cpu.cfs_quota_us`, 'utf8').catch(() => undefined), readFile(`${dir}/cpu.cfs_period_us`, 'utf8').catch(() => undefined)]);
  if (quota === undefined || period === undefined) return undefined;
  const q = Number(quota.trim());
  const p = Number(period.trim());
  return q > 0 && p > 0 ? q / p : null;
}

interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks: its own CPU and that of its children it reaped. */
  ticks: number;
}

/** /proc/<pid>/stat's parent and CPU times; null when the process is gone. */
async function readStat(procRoot: string, pid: number): Promise<ProcStat | null> {
  const raw = await readFile(`${procRoot}/${pid}/stat`, 'utf8').catch(() => null);
  if (raw === null) return null;
  // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
  const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14–17.
  const n = (i: number) => Number(f[i - 3]) || 0;
  return { ppid: n(4), ticks: n(14) + n(15) + n(16) + n(17) };
}

/** The children of `pid` from /proc/<pid>/task/<tid>/children; null where the kernel does not offer the file. */
async function childrenOf(procRoot: string, pid: number): Promise<number[] | null> {
  const tasks = await readdir(`${procRoot}/${pid}/task`).catch(() => null);
  if (!tasks) return [];
  const lists = await Promise.all(tasks.map((t) => readFile(`${procRoot}/${pid}/task/${t}/children`, 'utf8').catch(() => null)));
  if (lists.every((l) => l === null)) return null;
  return lists.flatMap((l) => (l ?? '').split(' ').filter(Boolean).map(Number));
}

/**
 * CPU seconds used so far by the processes rooted at `roots` (each with every descendant, and what they reaped).
 * A descendant that exits moves its time into its parent's reaped time, so the sum only grows. Walks down from
 * the roots (a few reads for a spawner and its runs); without /proc/<pid>/task/<tid>/children, scans /proc.
 */
export async function processTreeCpuSeconds(roots: number[], procRoot = '/proc'): Promise<number> {
  if (!roots.length) return 0;
  let total = 0;
  const seen = new Set<number>();
  let stack = [...roots];
  while (stack.length) {
    const level = stack.filter((pid) => !seen.has(pid));
    level.forEach((pid) => seen.add(pid));
    const found = await Promise.all(level.map(async (pid) => [await readStat(procRoot, pid), await childrenOf(procRoot, pid)] as const));
    if (found.some(([, kids]) => kids === null)) return scanTreeCpuSeconds(roots, procRoot);
    stack = [];
    for (const [st, kids] of found) {
      total += st?.ticks ?? 0;
      stack.push(...kids!);
    }
  }
  return total / CLOCK_TICKS_PER_SECOND;
}

/** The same sum from every process's parent in /proc (kernels without the children files). */
async function scanTreeCpuSeconds(roots: number[], procRoot: string): Promise<number> {
  const pids = (await readdir(procRoot).catch(() => [] as string[])).filter((d) => /^\d+$/.test(d)).map(Number);
  const stats = await Promise.all(pids.map(async (pid) => [pid, await readStat(procRoot, pid)] as const));
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const [pid, st] of stats) {
    if (!st) continue;
    ticks.set(pid, st.ticks);
    const list = children.get(st.ppid) ?? [];
    list.push(pid);
    children.set(st.ppid, list);
  }
  let total = 0;
  const seen = new Set<number>();
  const stack = [...roots];
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    total += ticks.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total / CLOCK_TICKS_PER_SECOND;
}

/** PSI "some avg10" of a cpu.pressure file ("some avg10=12.34 avg60=… total=…"); null when unreadable. */
export async function readCpuPressure(file: string): Promise<number | null> {
  const raw = await readFile(file, 'utf8').catch(() => null);
  const m = raw ? /^some avg10=([\d.]+)/m.exec(raw) : null;
  return m ? Number(m[1]) : null;
}

export interface LoadOptions {
  /** Until `setAllowance`: the machine's cores. */
  allowance?: CpuAllowance;
  /** LOAD_THRESHOLD: admit calls only while the projected load stays at or below it. */
  threshold: number;
  /** The CPU (cores) a call is assumed to cost before any call was measured. */
  callCostEstimateCores: number;
  /** The worker's process ids of decoder and synthesiser children to count with it (the spawner, the live decoder). */
  childRoots(): number[];
  /** Age (ms) of the oldest recogniser or synthesiser job waiting to run; 0 when none waits. */
  oldestQueuedMs?(): number;
  /** Calls running now (the cost of a call is measured over them). */
  activeCalls(): number;
  procRoot?: string;
  /**
   * The CPU pressure file to count (PSI: the worker's cgroup's cpu.pressure, else /proc/pressure/cpu); null: none.
   * Default: /proc/pressure/cpu.
   */
  pressureFile?: string | null;
}

export interface LoadSample {
  load: number;
  cpu: number;
  lagMs: number;
  queueMs: number;
  /** CPU pressure (PSI some avg10, %), null where the kernel does not report it. */
  pressurePct: number | null;
  /** CPU load one more call adds (a share of the allowance). */
  callCost: number;
}

/** Samples this worker's load; `admittable(active)` turns the last sample into calls that still fit. */
export class LoadMonitor {
  private readonly lag: ELDHistogram;
  private lastCpuSeconds: number | null = null;
  private lastAtMs = 0;
  /** Smoothed CPU load (EWMA over a few seconds: a single busy second is not a full worker). */
  private cpu = 0;
  /** CPU load with no call (the runtime, timers, the heartbeat), learnt while idle. */
  private baseline = 0;
  private callCost: number;
  private steadyCalls = -1;
  private steadySinceMs = 0;
  private current: LoadSample;
  private timer: NodeJS.Timeout | null = null;
  private allowance: CpuAllowance;

  constructor(private readonly opts: LoadOptions) {
    this.allowance = opts.allowance ?? { cores: availableParallelism(), source: 'cores' };
    this.callCost = opts.callCostEstimateCores / this.allowance.cores;
    this.current = { load: 0, cpu: 0, lagMs: 0, queueMs: 0, pressurePct: null, callCost: this.callCost };
    this.lag = monitorEventLoopDelay({ resolution: 10 });
  }

  get sample(): LoadSample {
    return this.current;
  }

  get cpuAllowance(): CpuAllowance {
    return this.allowance;
  }

  /** The allowance read at start (the cgroup is read asynchronously); the estimate of a call's cost follows it. */
  setAllowance(allowance: CpuAllowance): void {
    this.allowance = allowance;
    this.callCost = this.opts.callCostEstimateCores / allowance.cores;
    this.current = { ...this.current, callCost: round3(this.callCost) };
  }

  /** Starts sampling every `intervalMs`; `onSample` runs after each. */
  start(intervalMs: number, onSample: (s: LoadSample) => void): void {
    this.lag.enable();
    const tick = () =>
      void this.measure()
        .then(onSample)
        .catch(() => undefined);
    tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.lag.disable();
  }

  /** Takes one sample now (the first one only sets the CPU baseline of the next). */
  async measure(nowMs = Date.now()): Promise<LoadSample> {
    const own = process.cpuUsage();
    const ownSeconds = (own.user + own.system) / 1e6;
    const children = await processTreeCpuSeconds(this.opts.childRoots(), this.opts.procRoot);
    const cpuSeconds = ownSeconds + children;
    const active = this.opts.activeCalls();
    if (this.lastCpuSeconds !== null && nowMs > this.lastAtMs) {
      const instant = Math.max(0, cpuSeconds - this.lastCpuSeconds) / ((nowMs - this.lastAtMs) / 1000) / this.allowance.cores;
      this.cpu = this.cpu * 0.5 + instant * 0.5;
      if (active !== this.steadyCalls) {
        this.steadyCalls = active;
        this.steadySinceMs = nowMs;
      } else if (nowMs - this.steadySinceMs >= STEADY_MS) {
        if (active === 0) this.baseline = this.baseline * 0.8 + this.cpu * 0.2;
        else {
          // Never below a quarter of the estimate: calls that are quiet now (ringing, on hold) will talk.
          const measured = Math.max(this.opts.callCostEstimateCores / this.allowance.cores / 4, (this.cpu - this.baseline) / active);
          this.callCost = this.callCost * 0.7 + measured * 0.3;
        }
      }
    }
    this.lastCpuSeconds = cpuSeconds;
    this.lastAtMs = nowMs;
    // The mean, not a percentile: one long synchronous task is not overload, a loop that is always late is.
    const lagMs = this.lag.count > 0 ? Math.max(0, this.lag.mean / 1e6 - 10) : 0;
    this.lag.reset();
    const queueMs = this.opts.oldestQueuedMs?.() ?? 0;
    const pressureFile = this.opts.pressureFile === undefined ? `${this.opts.procRoot ?? '/proc'}/pressure/cpu` : this.opts.pressureFile;
    const pressurePct = pressureFile ? await readCpuPressure(pressureFile) : null;
    const pressure = pressurePct === null ? 0 : (pressurePct - PRESSURE_FROM_PCT) / (PRESSURE_FULL_PCT - PRESSURE_FROM_PCT);
    const load = Math.min(1, Math.max(this.cpu, lagMs / LAG_FULL_MS, queueMs / QUEUE_FULL_MS, pressure));
    this.current = { load: round3(load), cpu: round3(this.cpu), lagMs: Math.round(lagMs), queueMs: Math.round(queueMs), pressurePct, callCost: round3(this.callCost) };
    return this.current;
  }

  /**
   * Calls that still fit under the threshold with `active` calls running: the load the last sample measured, or
   * what the running calls will cost once they all talk (those just admitted have not shown their cost yet),
   * whichever is higher.
   */
  admittable(active: number): number {
    const projected = Math.max(this.current.load, this.baseline + active * this.callCost);
    const room = this.opts.threshold - projected;
    return room <= 0 ? 0 : Math.floor(room / this.callCost + 1e-9);
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
