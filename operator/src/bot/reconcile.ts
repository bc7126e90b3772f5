// Bot → the backend: upsert through the admin API, report the backend id and a Synced condition.
import { BOT_DEFAULTS, VOICE_API_GROUP, VOICE_API_VERSION, type BotResourceStatus } from '@voice-platform/schemas';
import { getCondition, rfc3339, setCondition } from '../conditions.js';
import type { Context } from '../context.js';
import { mergePatch } from '../kube.js';
import { errorMessage } from '../log.js';
import { sameJson } from '../fleet/reconcile.js';
import { BackendClient, BackendError, type Credentials } from './backend.js';
import { BOT_PLURAL, type BotResource } from './types.js';

/** Raised after the failure is already written to status: the controller only schedules the retry. */
export class ReportedError extends Error {}

/** The backend body for a Bot: every field, defaults filled in, so the backend mirrors the resource. */
export function botBody(bot: BotResource): Record<string, unknown> {
  const { fleetRef: _fleetRef, ...fields } = bot.spec;
  return { ...BOT_DEFAULTS, ...fields };
}

export function secretCredentials(ctx: Context): () => Promise<Credentials> {
  return async () => {
    const { backendCredentialsSecret: name, operatorNamespace: namespace } = ctx.settings;
    const secret = await ctx.clients.core.readNamespacedSecret({ name, namespace });
    const read = (key: string) => {
      const b64 = secret.data?.[key];
      if (!b64) throw new Error(`secret ${namespace}/${name} has no ${key}`);
      return Buffer.from(b64, 'base64').toString('utf8');
    };
    return { email: read('ADMIN_EMAIL'), password: read('ADMIN_PASSWORD') };
  };
}

export interface BotSync {
  backend: BackendClient;
  /** Deleted Bots whose backend bot is still to be deactivated. */
  tombstones: Map<string, string>;
}

export async function reconcileBot(ctx: Context, sync: BotSync, key: string, namespace: string, name: string): Promise<{ requeueAfterMs?: number }> {
  const cached = ctx.caches.bots.get(name, namespace);
  if (!cached) {
    // No hard delete in the backend: a deleted Bot is deactivated, keeping its calls' history.
    const botId = sync.tombstones.get(key);
    if (botId) {
      try {
        await sync.backend.updateBot(botId, { active: false });
      } catch (err) {
        if (!(err instanceof BackendError && err.status === 404)) throw err;
      }
      sync.tombstones.delete(key);
      ctx.logger.info('bot deactivated', { namespace, bot: name, botId });
    }
    return {};
  }
  const bot: BotResource = { ...cached, apiVersion: `${VOICE_API_GROUP}/${VOICE_API_VERSION}`, kind: 'Bot' };
  const status = bot.status ?? {};
  const nowMs = ctx.now();
  const synced = getCondition(status.conditions, 'Synced');
  const lastSyncMs = status.lastSyncTime ? Date.parse(status.lastSyncTime) : 0;
  if (
    status.botId &&
    synced?.status === 'True' &&
    status.observedGeneration === bot.metadata?.generation &&
    nowMs - lastSyncMs < ctx.settings.botResyncMs
  ) {
    return { requeueAfterMs: ctx.settings.botResyncMs - (nowMs - lastSyncMs) };
  }
  const body = botBody(bot);
  let botId = status.botId;
  try {
    if (botId) {
      try {
        await sync.backend.updateBot(botId, body);
      } catch (err) {
        if (!(err instanceof BackendError && err.status === 404)) throw err;
        botId = undefined; // removed in the backend: create it again
      }
    }
    if (!botId) botId = (await sync.backend.createBot(body)).id;
  } catch (err) {
    ctx.metrics.botSyncs.inc({ result: 'failure' });
    const reason = err instanceof BackendError ? (err.status === 0 || err.status >= 500 ? 'BackendUnavailable' : 'BackendRejected') : 'SyncFailed';
    const message = err instanceof BackendError ? backendErrorText(err) : errorMessage(err);
    await writeBotStatus(ctx, bot, (prev) => ({
      ...prev,
      botId: botId ?? prev.botId,
      observedGeneration: bot.metadata?.generation,
      conditions: setCondition(prev.conditions, { type: 'Synced', status: 'False', reason, message, observedGeneration: bot.metadata?.generation }, new Date(nowMs)),
    }));
    ctx.logger.warn('bot sync failed', { namespace, bot: name, error: message });
    throw new ReportedError(message);
  }
  ctx.metrics.botSyncs.inc({ result: 'success' });
  await writeBotStatus(ctx, bot, (prev) => ({
    ...prev,
    botId,
    observedGeneration: bot.metadata?.generation,
    lastSyncTime: rfc3339(new Date(nowMs)),
    conditions: setCondition(
      prev.conditions,
      { type: 'Synced', status: 'True', reason: 'Synced', message: `backend bot ${botId} up to date`, observedGeneration: bot.metadata?.generation },
      new Date(nowMs),
    ),
  }));
  return { requeueAfterMs: ctx.settings.botResyncMs };
}

/** The backend's own words: code, message and each field problem it listed. */
export function backendErrorText(err: BackendError): string {
  const head = err.code === 'http_error' ? err.message : `${err.code}: ${err.message}`;
  const problems = Array.isArray(err.details)
    ? (err.details as Array<{ field?: unknown; message?: unknown }>)
        .filter((d) => d && typeof d.message === 'string')
        .map((d) => (typeof d.field === 'string' && d.field ? `${d.field}: ${String(d.message)}` : String(d.message)))
    : [];
  return problems.length ? `${head} (${problems.join('; ')})` : head;
}

async function writeBotStatus(ctx: Context, bot: BotResource, build: (prev: BotResourceStatus) => BotResourceStatus): Promise<void> {
  const prev = bot.status ?? {};
  const next = build(prev);
  if (sameJson(prev, next)) return;
  await ctx.clients.custom.patchNamespacedCustomObjectStatus(
    {
      group: VOICE_API_GROUP,
      version: VOICE_API_VERSION,
      namespace: bot.metadata!.namespace!,
      plural: BOT_PLURAL,
      name: bot.metadata!.name!,
      body: { status: next },
    },
    mergePatch,
  );
}
