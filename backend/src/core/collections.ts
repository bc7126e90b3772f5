// The MongoDB (FerretDB) collections the backend keeps, by name: a module of its own that imports nothing,
// so any store may use it (stores.ts re-exports it).
export const COLLECTIONS = {
  users: 'users',
  apiKeys: 'api_keys',
  bots: 'bots',
  /** Immutable snapshots of each bot's behaviour, `<bot id>:<version>` (bots/versions.ts). */
  botVersions: 'bot_versions',
  /** Settled calls (calls/store.ts). */
  calls: 'calls',
  /** Calls not ended: queued, dialing, ringing, in progress (calls/store.ts). */
  liveCalls: 'calls_live',
  /** Calls ended but not settled: a status event still due or an analysis pending (calls/store.ts). */
  endingCalls: 'calls_ending',
  /** Ids of calls the caller chose the id of (campaign attempts), kept so each is placed once (calls/store.ts). */
  chosenCallIds: 'call_ids_chosen',
  /** Data migrations done (their names, as `_id`). */
  migrations: 'migrations',
  idempotency: 'idempotency_keys',
  trunks: 'sip_outbound_trunks',
  webhooks: 'webhooks',
  webhookDeliveries: 'webhook_deliveries',
  webhookAttempts: 'webhook_attempts',
  /** Webhook events the Redis outbox could not take (webhooks/outbox.ts); the deliverer fans them out and deletes them. */
  webhookOutbox: 'webhook_outbox',
  campaigns: 'campaigns',
  campaignContacts: 'campaign_contacts',
  dnc: 'dnc_numbers',
  inboundNumbers: 'inbound_numbers',
  /** Knowledge bases (knowledge/store.ts): a `version` moved by every document change (each replica's index checks it). */
  knowledgeBases: 'knowledge_bases',
  knowledgeDocuments: 'knowledge_documents',
  knowledgeChunks: 'knowledge_chunks',
  /** A bot's test cases (botTests/). */
  testCases: 'test_cases',
  /** Test runs with each case's result (botTests/); bot versions' publish check reads them. */
  testRuns: 'test_runs',
} as const;
