// The worker's load: the CPU allowance read from cgroup files, the CPU of a real busy process tree, and the
// admission arithmetic the slots use (docs/design.md §15).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitUntil } from '@voice-platform/tests/infra';
import { Slots } from './capacity.js';
import { LoadMonitor, processTreeCpuSeconds, readCpuAllowance, readCpuPressure } from './load.js';

/** A /proc/self/cgroup and a cgroup tree under a temporary root. */
function fakeRoots(cgroupLine: string, files: Record<string, string>): { procRoot: string; cgroupRoot: string; done(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'vp-cgroup-'));
  mkdirSync(path.join(root, 'proc', 'self'), { recursive: true });
  writeFileSync(path.join(root, 'proc', 'self', 'cgroup'), cgroupLine);
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, 'sys', rel)), { recursive: true });
    writeFileSync(path.join(root, 'sys', rel), body);
  }
  return { procRoot: path.join(root, 'proc'), cgroupRoot: path.join(root, 'sys'), done: () => rmSync(root, { recursive: true, force: true }) };
}

/** A process that burns one core until killed (a stand-in for a decoder child of the worker). */
function busyProcess(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

describe('the CPU allowance', () => {
  it('reads a cgroup v2 cpu.max quota, the lowest on the way up', async () => {
    const r = fakeRoots('0::/kubepods/pod1/worker\n', { 'kubepods/cpu.max': '300000 100000\n', 'kubepods/pod1/worker/cpu.max': '150000 100000\n' });
    try {
      expect(await readCpuAllowance({ procRoot: r.procRoot, cgroupRoot: r.cgroupRoot, cores: 8 })).toEqual({ cores: 1.5, source: 'cgroup' });
    } finally {
      r.done();
    }
  });

  it('reads cgroup v1 cfs quota and period, never more than the cores', async () => {
    const r = fakeRoots('5:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n', { 'cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '400000\n', 'cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n' });
    try {
      expect(await readCpuAllowance({ procRoot: r.procRoot, cgroupRoot: r.cgroupRoot, cores: 2 })).toEqual({ cores: 2, source: 'cgroup' });
      expect(await readCpuAllowance({ procRoot: r.procRoot, cgroupRoot: r.cgroupRoot, cores: 16 })).toEqual({ cores: 4, source: 'cgroup' });
    } finally {
      r.done();
    }
  });

  it('falls back to the cores, saying why, with no quota or no cgroup at all', async () => {
    const unlimited = fakeRoots('0::/\n', { 'cpu.max': 'max 100000\n' });
    const v1unlimited = fakeRoots('4:cpu,cpuacct:/\n', { 'cpu,cpuacct/cpu.cfs_quota_us': '-1\n', 'cpu,cpuacct/cpu.cfs_period_us': '100000\n' });
    const none = fakeRoots('0::/\n', {});
    try {
      expect(await readCpuAllowance({ procRoot: unlimited.procRoot, cgroupRoot: unlimited.cgroupRoot, cores: 3 })).toEqual({ cores: 3, source: 'cores', note: 'the cgroup sets no CPU quota' });
      expect(await readCpuAllowance({ procRoot: v1unlimited.procRoot, cgroupRoot: v1unlimited.cgroupRoot, cores: 3 })).toEqual({ cores: 3, source: 'cores', note: 'the cgroup sets no CPU quota' });
      expect(await readCpuAllowance({ procRoot: none.procRoot, cgroupRoot: none.cgroupRoot, cores: 3 })).toEqual({ cores: 3, source: 'cores', note: 'no cgroup CPU controller readable' });
      expect(await readCpuAllowance({ procRoot: '/nonexistent', cores: 3 })).toEqual({ cores: 3, source: 'cores', note: '/nonexistent/self/cgroup unreadable' });
    } finally {
      for (const r of [unlimited, v1unlimited, none]) r.done();
    }
  });
});

describe('CPU of a process tree', () => {
  it("counts a child's grandchildren and keeps their time once they exit", async () => {
    // A shell (the spawner's place) running a node that burns half a second of CPU (a decoder's place), then
    // marking that it ended.
    const dir = mkdtempSync(path.join(tmpdir(), 'vp-tree-'));
    const marker = path.join(dir, 'ended');
    const burn = `const t = process.cpuUsage(); while (process.cpuUsage(t).user < 500000) {}`;
    const parent = spawn('/bin/sh', ['-c', `${process.execPath} -e '${burn}'; touch ${marker}; sleep 30`], { stdio: 'ignore' });
    try {
      await waitUntil(async () => (await processTreeCpuSeconds([parent.pid!])) >= 0.2, { what: 'the running grandchild counted', timeoutMs: 20_000 });
      await waitUntil(() => existsSync(marker), { what: 'the grandchild to end', timeoutMs: 20_000 });
      // Gone and reaped by the shell: its time is in the shell's reaped time, not lost.
      expect(await processTreeCpuSeconds([parent.pid!])).toBeGreaterThanOrEqual(0.5);
      expect(await processTreeCpuSeconds([])).toBe(0);
    } finally {
      parent.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('CPU of a process tree, read from a /proc of fixed files', () => {
  /** pid → [ppid, utime, stime, cutime, cstime]; `childrenFiles`: the kernel offers task/<tid>/children. */
  function fakeProc(tree: Record<number, [number, number, number, number, number]>, childrenFiles: boolean): { root: string; done(): void } {
    const root = mkdtempSync(path.join(tmpdir(), 'vp-proc-'));
    for (const [pid, [ppid, ut, st, cut, cst]] of Object.entries(tree)) {
      mkdirSync(path.join(root, pid, 'task', pid), { recursive: true });
      // Fields 3–17 after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime.
      writeFileSync(path.join(root, pid, 'stat'), `${pid} (a (tricky) name) S ${ppid} 1 1 0 -1 0 0 0 0 0 ${ut} ${st} ${cut} ${cst} 20 0 1 0\n`);
      if (childrenFiles) {
        const kids = Object.entries(tree).filter(([, v]) => v[0] === Number(pid)).map(([k]) => k);
        writeFileSync(path.join(root, pid, 'task', pid, 'children'), kids.length ? `${kids.join(' ')} ` : '');
      }
    }
    return { root, done: () => rmSync(root, { recursive: true, force: true }) };
  }
  const tree: Record<number, [number, number, number, number, number]> = {
    100: [1, 10, 5, 30, 5],
    101: [100, 200, 20, 0, 0],
    102: [101, 50, 0, 0, 0],
    200: [1, 999, 999, 0, 0],
  };

  it('sums a root, its descendants and what they reaped, by the children files or by a scan of every parent', async () => {
    for (const childrenFiles of [true, false]) {
      const proc = fakeProc(tree, childrenFiles);
      try {
        // (10+5+30+5) + (200+20) + 50 ticks of 10 ms; pid 200 is no descendant.
        expect(await processTreeCpuSeconds([100], proc.root)).toBeCloseTo(3.2, 6);
        expect(await processTreeCpuSeconds([101, 200], proc.root)).toBeCloseTo(22.68, 6);
        expect(await processTreeCpuSeconds([999], proc.root)).toBe(0);
      } finally {
        proc.done();
      }
    }
  });
});

describe('LoadMonitor', () => {
  it('turns a decoder child burning a core of a one-core allowance into load past the threshold and no room', async () => {
    const busy = busyProcess();
    // Threshold 0.5: the busy child gets well over half a core even on two cores shared with other suites.
    const monitor = new LoadMonitor({ allowance: { cores: 1, source: 'setting' }, threshold: 0.5, callCostEstimateCores: 0.1, childRoots: () => [busy.pid!], activeCalls: () => 0, pressureFile: null });
    try {
      await waitUntil(async () => (await monitor.measure()).load >= 0.5, { what: 'the load to rise', timeoutMs: 15_000, intervalMs: 250 });
      expect(monitor.admittable(0)).toBe(0);
    } finally {
      busy.kill('SIGKILL');
    }
    // The child gone, the load falls back under the threshold and room comes back.
    await waitUntil(async () => (await monitor.measure()).load < 0.2, { what: 'the load to fall', timeoutMs: 15_000, intervalMs: 250 });
    expect(monitor.admittable(0)).toBeGreaterThan(0);
  });

  it("counts the machine's CPU pressure: 25 % some is an ordinary busy machine, 75 % is full", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vp-psi-'));
    const file = path.join(dir, 'cpu');
    const at = async (some: string) => {
      writeFileSync(file, `some avg10=${some} avg60=1.00 avg300=1.00 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`);
      const monitor = new LoadMonitor({ allowance: { cores: 64, source: 'setting' }, threshold: 0.7, callCostEstimateCores: 1, childRoots: () => [], activeCalls: () => 0, pressureFile: file });
      return monitor.measure();
    };
    try {
      expect(await readCpuPressure(file)).toBeNull();
      expect((await at('10.00')).load).toBeLessThan(0.05);
      expect(await at('50.00')).toMatchObject({ load: 0.5, pressurePct: 50 });
      expect((await at('90.12')).load).toBe(1);
      expect(await readCpuPressure(file)).toBe(90.12);
      // Without the file (an older kernel), no pressure is counted and the sample says so.
      const none = new LoadMonitor({ allowance: { cores: 64, source: 'setting' }, threshold: 0.7, callCostEstimateCores: 1, childRoots: () => [], activeCalls: () => 0, pressureFile: path.join(dir, 'missing') });
      expect((await none.measure()).pressurePct).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('admits what fits the threshold at the cost a call is estimated to have before any was measured', () => {
    // 0.2 cores a call on 2 cores: 0.1 load a call; 0.7 − 0.1 × active, in whole calls.
    const monitor = new LoadMonitor({ allowance: { cores: 2, source: 'setting' }, threshold: 0.7, callCostEstimateCores: 0.2, childRoots: () => [], activeCalls: () => 0 });
    expect(monitor.sample.callCost).toBe(0.1);
    expect([0, 3, 6, 7, 9].map((n) => monitor.admittable(n))).toEqual([7, 4, 1, 0, 0]);
    monitor.setAllowance({ cores: 4, source: 'cgroup' });
    expect(monitor.sample.callCost).toBe(0.05);
    expect(monitor.admittable(0)).toBe(14);
  });
});

describe('Slots with load admission', () => {
  it('takes no call past the room the load leaves, though slots are free, except a job the fleet already admitted', async () => {
    let room = 2;
    const slots = new Slots(30, undefined, 1);
    slots.admitBy((active) => room - active);
    expect(slots.free).toBe(2);
    expect(slots.tryAcquire('a')).toBe('ok');
    expect(slots.tryAcquire('b', 'test')).toBe('ok');
    expect(slots.free).toBe(0);
    expect(slots.tryAcquire('c')).toBe('worker_overloaded');
    expect(slots.tryAcquire('c', 'test')).toBe('worker_overloaded');
    // A claimed job was reserved on this worker's reported room: only the hard ceiling stops it.
    expect(slots.tryAcquire('claimed', 'dialout', { admitted: true })).toBe('ok');
    // The claim loop waits for room: a new sample with room wakes it, one without does not.
    let woken = false;
    void slots.changed().then(() => (woken = true));
    slots.remeasured();
    await Promise.resolve();
    expect(woken).toBe(false);
    room = 5;
    slots.remeasured();
    await Promise.resolve();
    expect(woken).toBe(true);
    expect(slots.free).toBe(2);
    slots.draining = true;
    expect(slots.free).toBe(0);
  });
});
