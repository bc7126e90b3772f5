// Operator entry point: settings → metrics server → leader election → operator. Only the leader
// runs informers and reconcilers; SIGTERM stops reconciling, releases the Lease, and exits 0.
import { settingsOrExit } from '@voice-platform/schemas';
import * as k8s from '@kubernetes/client-node';
import { hostname } from 'node:os';
import { createOperator, type Operator } from './controller.js';
import { LeaderElector } from './leader.js';
import { createLogger, errorMessage } from './core/log.js';
import { createMetrics, serveMetrics } from './core/metrics.js';
import { loadSettings, operatorSettings } from './settings.js';

async function main(): Promise<void> {
  const settings = settingsOrExit('operator', () => loadSettings(process.env));
  const identity = settings.POD_NAME ?? hostname();
  const logger = createLogger(settings.LOG_LEVEL, { component: 'operator', identity });
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault(); // in-cluster service account, or KUBECONFIG
  const metrics = createMetrics(undefined, true);
  let operator: Operator | undefined;
  const server = await serveMetrics(metrics, settings.METRICS_PORT, () => true);

  const startOperator = async () => {
    metrics.isLeader.set(1);
    operator = createOperator({ kc, settings: operatorSettings(settings), logger, metrics, identity });
    await operator.start();
  };
  const stopOperator = async () => {
    metrics.isLeader.set(0);
    await operator?.stop();
    operator = undefined;
  };

  let shuttingDown = false;
  const elector = settings.LEADER_ELECTION
    ? new LeaderElector({
        kc,
        namespace: settings.OPERATOR_NAMESPACE,
        name: settings.LEADER_ELECTION_ID,
        identity,
        leaseDurationMs: settings.LEASE_DURATION_MS,
        renewDeadlineMs: settings.LEASE_RENEW_DEADLINE_MS,
        retryPeriodMs: settings.LEASE_RETRY_PERIOD_MS,
        logger,
        onStartedLeading: startOperator,
        onStoppedLeading: async () => {
          await stopOperator();
          // Lost the Lease while running: exit so the restarted replica campaigns with a clean state.
          if (!shuttingDown) process.exit(1);
        },
      })
    : undefined;
  if (elector) elector.start();
  else await startOperator();
  logger.info('operator running', { leaderElection: settings.LEADER_ELECTION, metricsPort: settings.METRICS_PORT });

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info('shutting down', { signal });
    const force = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, settings.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    try {
      if (elector) await elector.stop();
      else await stopOperator();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      process.exit(0);
    } catch (err) {
      logger.error('shutdown failed', { error: errorMessage(err) });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`operator failed: ${errorMessage(err)}\n`);
  process.exit(1);
});
