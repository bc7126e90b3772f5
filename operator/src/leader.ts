// Lease-based leader election (coordination.k8s.io/v1), as client-go's leaderelection does it: a
// replica acts only while it holds the Lease; it renews every retry period and gives up leadership
// when it cannot renew within the renew deadline. Expiry is judged on this replica's own clock, from
// when it last saw the Lease change, so clock skew between nodes does not matter.
import * as k8s from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import { isStatus } from './core/kube.js';
import { errorMessage, silentLogger, type Logger } from './core/log.js';

interface LeaderElectionOptions {
  kc: k8s.KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading: () => void | Promise<void>;
  /** Called once when leadership is lost or released. */
  onStoppedLeading: () => void | Promise<void>;
  logger?: Logger;
}

export class LeaderElector {
  private readonly api: k8s.CoordinationV1Api;
  private readonly logger: Logger;
  private observed: { holder: string; renewTime: string; transitions: number } | undefined;
  private observedAtMs = 0;
  private lastRenewMs = 0;
  private stopping = false;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  leading = false;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.api = opts.kc.makeApiClient(k8s.CoordinationV1Api);
    this.logger = opts.logger ?? silentLogger;
  }

  /** Runs until stop(): campaigns, leads, and campaigns again after losing the Lease. */
  start(): void {
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let acquired = false;
      try {
        acquired = await this.tryAcquireOrRenew();
      } catch (err) {
        this.logger.warn('lease update failed', { error: errorMessage(err) });
      }
      const now = Date.now();
      if (acquired) {
        this.lastRenewMs = now;
        if (!this.leading) {
          this.leading = true;
          this.logger.info('became leader', { identity: this.opts.identity, lease: this.opts.name });
          await this.opts.onStartedLeading();
        }
      } else if (this.leading && now - this.lastRenewMs > this.opts.renewDeadlineMs) {
        this.leading = false;
        this.logger.warn('lost leadership', { identity: this.opts.identity });
        await this.opts.onStoppedLeading();
      }
      await delay(this.opts.retryPeriodMs, undefined, { signal: this.abort.signal }).catch(() => undefined);
    }
  }

  private leaseBody(existing: k8s.V1Lease | undefined, now: Date): k8s.V1Lease {
    const takeover = existing?.spec?.holderIdentity !== this.opts.identity;
    const micro = new k8s.V1MicroTime(now.getTime());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(existing?.metadata ?? {}), name: this.opts.name, namespace: this.opts.namespace },
      spec: {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: Math.ceil(this.opts.leaseDurationMs / 1000),
        acquireTime: takeover || !existing?.spec?.acquireTime ? micro : existing.spec.acquireTime,
        renewTime: micro,
        leaseTransitions: (existing?.spec?.leaseTransitions ?? 0) + (existing && takeover ? 1 : 0),
      },
    };
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const now = new Date();
    let lease: k8s.V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      await this.api.createNamespacedLease({ namespace, body: this.leaseBody(undefined, now) });
      this.observe(identity, now);
      return true;
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewTime = spec.renewTime ? new Date(spec.renewTime as unknown as string).toISOString() : '';
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) {
      this.observed = { holder, renewTime, transitions: spec.leaseTransitions ?? 0 };
      this.observedAtMs = Date.now();
    }
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== identity && this.observedAtMs + durationMs > Date.now()) return false;
    // Ours, released, or expired: write it with the resourceVersion we read, so a racing replica
    // gets a 409 instead of both believing they won.
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: this.leaseBody(lease, now) });
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
    this.observe(identity, now);
    return true;
  }

  private observe(holder: string, at: Date): void {
    this.observed = { holder, renewTime: at.toISOString(), transitions: 0 };
    this.observedAtMs = Date.now();
  }

  /** Stops campaigning; a leader hands the Lease over at once by clearing its holder. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    await this.loop;
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace });
      if (lease.spec?.holderIdentity === this.opts.identity) {
        lease.spec.holderIdentity = undefined;
        lease.spec.leaseDurationSeconds = 1;
        lease.spec.renewTime = new k8s.V1MicroTime(Date.now());
        await this.api.replaceNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace, body: lease });
      }
    } catch (err) {
      this.logger.warn('lease not released', { error: errorMessage(err) });
    }
    await this.opts.onStoppedLeading();
  }
}
