// Bot → the backend: upsert through the admin API, report the backend id and a Synced condition;
// a finalizer deactivates the backend bot when the Bot is deleted. FleetFound reports spec.fleetRef.
import { BOT_DEFAULTS, VOICE_API_GROUP, VOICE_API_VERSION, type BotResourceStatus, type Condition } from '@voice-platform/schemas';
import { getCondition, rfc3339, setCondition } from '../core/conditions.js';
import type { BotContext } from './context.js';
import { customObjectPath, isStatus, jsonPatch, mergePatch } from '../core/kube.js';
import { errorMessage } from '../core/log.js';
import { sameJson } from '../fleet/reconcile.js';
import { BotSyncClient, BackendError, type Credentials } from './backend.js';
import { BOT_PLURAL, type BotResource } from './types.js';

/** Raised after the failure is already written to status: the controller only schedules the retry. */
export class ReportedError extends Error {}

/** The backend body for a Bot: every field, defaults filled in, so the backend mirrors the resource. */
function botBody(bot: BotResource): Record<string, unknown> {
  const { fleetRef: _fleetRef, ...fields } = bot.spec;
  return { ...BOT_DEFAULTS, ...fields };
}

export function secretCredentials(ctx: BotContext): () => Promise<Credentials> {
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
  backend: BotSyncClient;
}

/** Held on every Bot the operator has synced, so a deletion (even while the operator is down) waits for the backend bot's deactivation. */
export const BOT_FINALIZER = `${VOICE_API_GROUP}/backend-bot`;
/**
 * Set before the operator creates a backend bot (when the create began). The backend assigns the id and
 * has no field for an external key, so if the id is lost (crash or lost response before status.botId is
 * written) the next pass adopts the unclaimed backend bot of the same name created since then, instead
 * of creating a second one. Removed once status.botId is written.
 */
export const CREATING_ANNOTATION = `${VOICE_API_GROUP}/creating`;
/** Operator and backend clocks may disagree by this much when comparing the marker with created_at. */
const CLOCK_SKEW_MS = 60_000;

export async function reconcileBot(ctx: BotContext, sync: BotSync, namespace: string, name: string): Promise<{ requeueAfterMs?: number }> {
  const cached = ctx.caches.bots.get(name, namespace);
  // Gone from the API server: the finalizer made sure its backend bot was handled first.
  if (!cached) return {};
  let bot: BotResource = { ...cached, apiVersion: `${VOICE_API_GROUP}/${VOICE_API_VERSION}`, kind: 'Bot' };
  if (bot.metadata?.deletionTimestamp) return finalizeBot(ctx, sync, bot);

  const status = bot.status ?? {};
  const nowMs = ctx.now();
  const generation = bot.metadata?.generation;
  const fleet = fleetCondition(ctx, bot);
  const marker = bot.metadata?.annotations?.[CREATING_ANNOTATION];
  // A marker means something only while status.botId is missing: a create began and its id may be lost.
  const pendingCreate = status.botId ? undefined : marker;
  let marked = false;
  // The finalizer goes on before any backend bot can exist, and with it the marker when a create is due.
  if (!hasFinalizer(bot) || (!status.botId && !marker)) {
    marked = !status.botId && !marker;
    bot = await patchMetadata(ctx, bot, { addFinalizer: !hasFinalizer(bot), creating: marked ? new Date(nowMs).toISOString() : undefined });
  }

  const synced = getCondition(status.conditions, 'Synced');
  const lastSyncMs = status.lastSyncTime ? Date.parse(status.lastSyncTime) : 0;
  if (
    status.botId &&
    synced?.status === 'True' &&
    status.observedGeneration === generation &&
    nowMs - lastSyncMs < ctx.settings.botResyncMs
  ) {
    // A VoiceFleet came or went: only FleetFound may have changed.
    await writeBotStatus(ctx, bot, (prev) => ({ ...prev, conditions: withFleet(prev.conditions, fleet, nowMs) }));
    if (marker) await patchMetadata(ctx, bot, { creating: null }); // left by a crash after the status write
    return { requeueAfterMs: ctx.settings.botResyncMs - (nowMs - lastSyncMs) };
  }

  const body = botBody(bot);
  let botId = status.botId;
  // The backend's answer to what was applied: its latest version and the one calls run.
  let applied: { version?: number; published_version?: number } | undefined;
  try {
    if (botId) {
      try {
        applied = await sync.backend.updateBot(botId, body);
      } catch (err) {
        if (!(err instanceof BackendError && err.status === 404)) throw err;
        botId = undefined; // removed in the backend: create it again
      }
    }
    if (!botId && pendingCreate) {
      botId = await findCreatedBot(ctx, sync, bot, pendingCreate);
      if (botId) {
        ctx.logger.info('adopting the backend bot an interrupted create made', { namespace, bot: name, botId });
        applied = await sync.backend.updateBot(botId, body);
      }
    }
    if (!botId) {
      if (!marked && !pendingCreate) {
        // status.botId named a bot the backend no longer has: mark before creating its successor.
        bot = await patchMetadata(ctx, bot, { creating: new Date(nowMs).toISOString() });
        marked = true;
      }
      const created = await sync.backend.createBot(body);
      botId = created.id;
      applied = created;
    }
    // A Bot publishes what it applies (shared/DESIGN.md §17): a save publishes itself unless the bot requires
    // passing tests, and then the applied version is published here, once its tests are green (until then the
    // backend answers 409 tests_failing: Synced False, TestsFailing, retried). A version published in the
    // console meanwhile (a rollback) gives way to the resource's on the next pass: the resource is the truth.
    if (applied?.version !== undefined && applied.version !== applied.published_version) await sync.backend.publishBot(botId, applied.version);
  } catch (err) {
    await reportFailure(ctx, bot, err, '', (prev) => ({
      ...prev,
      botId: botId ?? prev.botId,
      observedGeneration: generation,
      conditions: withFleet(prev.conditions, fleet, nowMs),
    }));
  }
  ctx.metrics.botSyncs.inc({ result: 'success' });
  await writeBotStatus(ctx, bot, (prev) => ({
    ...prev,
    botId,
    observedGeneration: generation,
    lastSyncTime: rfc3339(new Date(nowMs)),
    conditions: setCondition(
      withFleet(prev.conditions, fleet, nowMs),
      { type: 'Synced', status: 'True', reason: 'Synced', message: `backend bot ${botId} up to date`, observedGeneration: generation },
      new Date(nowMs),
    ),
  }));
  // status.botId is stored: the marker has done its job (kept until here, so a crash before this adopts).
  if (marker || marked) await patchMetadata(ctx, bot, { creating: null });
  return { requeueAfterMs: ctx.settings.botResyncMs };
}

/**
 * A deleted Bot: deactivate its backend bot (no hard delete in the backend, which keeps its calls'
 * history), then release the finalizer. On failure the finalizer stays and the pass is retried.
 */
async function finalizeBot(ctx: BotContext, sync: BotSync, bot: BotResource): Promise<{ requeueAfterMs?: number }> {
  if (!hasFinalizer(bot)) return {};
  const { namespace, name } = bot.metadata as { namespace: string; name: string };
  const creating = bot.metadata?.annotations?.[CREATING_ANNOTATION];
  let botId = bot.status?.botId;
  try {
    // Deleted between a create and the status write: the marker still finds that bot.
    if (!botId && creating) botId = await findCreatedBot(ctx, sync, bot, creating);
    if (botId) {
      try {
        await sync.backend.updateBot(botId, { active: false });
      } catch (err) {
        if (!(err instanceof BackendError && err.status === 404)) throw err;
      }
    }
  } catch (err) {
    const doing = botId ? `deactivating backend bot ${botId}` : 'looking for the backend bot to deactivate';
    await reportFailure(ctx, bot, err, `${doing}: `, (prev) => prev);
  }
  await removeFinalizer(ctx, bot);
  ctx.logger.info(botId ? 'bot deactivated' : 'bot released (no backend bot)', { namespace, bot: name, botId });
  return {};
}

/** Writes the failure to the Synced condition and raises ReportedError (the controller retries with backoff). */
async function reportFailure(
  ctx: BotContext,
  bot: BotResource,
  err: unknown,
  prefix: string,
  build: (prev: BotResourceStatus) => BotResourceStatus,
): Promise<never> {
  ctx.metrics.botSyncs.inc({ result: 'failure' });
  const reason = err instanceof BackendError ? (err.code === 'tests_failing' ? 'TestsFailing' : err.status === 0 || err.status >= 500 ? 'BackendUnavailable' : 'BackendRejected') : 'SyncFailed';
  const message = prefix + (err instanceof BackendError ? backendErrorText(err) : errorMessage(err));
  const generation = bot.metadata?.generation;
  await writeBotStatus(ctx, bot, (prev) => {
    const next = build(prev);
    return {
      ...next,
      conditions: setCondition(next.conditions, { type: 'Synced', status: 'False', reason, message, observedGeneration: generation }, new Date(ctx.now())),
    };
  });
  ctx.logger.warn('bot sync failed', { namespace: bot.metadata?.namespace, bot: bot.metadata?.name, error: message });
  throw new ReportedError(message);
}

/**
 * The backend bot an interrupted create left behind: same name, created since the marker, and not
 * the botId of any other Bot. The oldest such bot is the one this Bot's first create made.
 */
async function findCreatedBot(ctx: BotContext, sync: BotSync, bot: BotResource, creating: string): Promise<string | undefined> {
  const sinceMs = Date.parse(creating) - CLOCK_SKEW_MS;
  if (Number.isNaN(sinceMs)) return undefined;
  const claimed = new Set(
    ctx.caches.bots
      .list()
      .filter((b) => b.metadata?.uid !== bot.metadata?.uid)
      .map((b) => b.status?.botId)
      .filter((id): id is string => !!id),
  );
  const found = (await sync.backend.listBots())
    .filter((b) => b.name === bot.spec.name && !claimed.has(b.id) && Date.parse(String(b.created_at)) >= sinceMs)
    .sort((a, b) => Date.parse(String(a.created_at)) - Date.parse(String(b.created_at)));
  return found[0]?.id;
}

/** FleetFound for spec.fleetRef (undefined: no fleetRef, no condition). Informational: the bot is synced either way. */
function fleetCondition(ctx: BotContext, bot: BotResource): Omit<Condition, 'lastTransitionTime'> | undefined {
  const ref = bot.spec.fleetRef?.name;
  if (!ref) return undefined;
  const namespace = bot.metadata!.namespace!;
  return ctx.caches.fleets.get(ref, namespace)
    ? { type: 'FleetFound', status: 'True', reason: 'FleetFound', message: `VoiceFleet ${ref} exists`, observedGeneration: bot.metadata?.generation }
    : {
        type: 'FleetFound',
        status: 'False',
        reason: 'FleetNotFound',
        message: `VoiceFleet ${ref} not found in namespace ${namespace}`,
        observedGeneration: bot.metadata?.generation,
      };
}

function withFleet(conditions: Condition[] | undefined, fleet: Omit<Condition, 'lastTransitionTime'> | undefined, nowMs: number): Condition[] {
  if (fleet) return setCondition(conditions, fleet, new Date(nowMs));
  return (conditions ?? []).filter((c) => c.type !== 'FleetFound');
}

function hasFinalizer(bot: BotResource): boolean {
  return bot.metadata?.finalizers?.includes(BOT_FINALIZER) ?? false;
}

function botPath(bot: BotResource) {
  return customObjectPath(BOT_PLURAL, bot);
}

/**
 * Adds the finalizer and/or sets (string) or clears (null) the create marker. Adding either carries
 * the resourceVersion it was decided on: a merge patch replaces the whole finalizers list (another
 * controller's entry must not be dropped), and a marker decided from a stale cache (a marker or botId
 * already written but not yet seen) would let a second create through. A 409 retries the pass.
 * Returns the Bot with the new metadata.
 */
async function patchMetadata(ctx: BotContext, bot: BotResource, change: { addFinalizer?: boolean; creating?: string | null }): Promise<BotResource> {
  const metadata: Record<string, unknown> = {};
  if (change.addFinalizer) metadata.finalizers = [...(bot.metadata?.finalizers ?? []), BOT_FINALIZER];
  if (change.creating !== undefined) metadata.annotations = { [CREATING_ANNOTATION]: change.creating };
  if (change.addFinalizer || typeof change.creating === 'string') metadata.resourceVersion = bot.metadata?.resourceVersion;
  const res = (await ctx.clients.custom.patchNamespacedCustomObject({ ...botPath(bot), body: { metadata } }, mergePatch)) as BotResource;
  return { ...bot, metadata: res.metadata };
}

/** JSON Patch that removes exactly our entry, guarded by a test that it is still at that index. */
async function removeFinalizer(ctx: BotContext, bot: BotResource): Promise<void> {
  const i = bot.metadata!.finalizers!.indexOf(BOT_FINALIZER);
  const body = [
    { op: 'test', path: `/metadata/finalizers/${i}`, value: BOT_FINALIZER },
    { op: 'remove', path: `/metadata/finalizers/${i}` },
  ];
  try {
    await ctx.clients.custom.patchNamespacedCustomObject({ ...botPath(bot), body }, jsonPatch);
  } catch (err) {
    if (!isStatus(err, 404)) throw err; // already gone
  }
}

/** The backend's own words: code, message and each field problem it listed. */
function backendErrorText(err: BackendError): string {
  const head = err.code === 'http_error' ? err.message : `${err.code}: ${err.message}`;
  const problems = Array.isArray(err.details)
    ? (err.details as Array<{ field?: unknown; message?: unknown }>)
        .filter((d) => d && typeof d.message === 'string')
        .map((d) => (typeof d.field === 'string' && d.field ? `${d.field}: ${String(d.message)}` : String(d.message)))
    : [];
  return problems.length ? `${head} (${problems.join('; ')})` : head;
}

async function writeBotStatus(ctx: BotContext, bot: BotResource, build: (prev: BotResourceStatus) => BotResourceStatus): Promise<void> {
  const prev = bot.status ?? {};
  const next = build(prev);
  if (sameJson(prev, next)) return;
  await ctx.clients.custom.patchNamespacedCustomObjectStatus({ ...botPath(bot), body: { status: next } }, mergePatch);
}
