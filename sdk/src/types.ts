// The request and response types of the operations the client offers, picked from the generated schema
// (schema.gen.ts) by operation id, so a change of the API shows up here as a type error.
import type { operations, webhooks } from './schema.gen.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Op = keyof operations;
type Body<O extends Op> = operations[O] extends { requestBody: infer R } ? Json<R> : never;
type Answer<O extends Op, S extends keyof operations[O]['responses']> = Json<operations[O]['responses'][S]>;
type Query<O extends Op> = NonNullable<operations[O]['parameters']['query']>;

export type DialoutRequest = Body<'dialout'>;
export type DialoutResponse = Answer<'dialout', 201>;
export type Call = Answer<'getCall', 200>;
/** A bot's test run (docs/design.md §17), as the `voice-platform test` CLI reads it. */
export type TestRun = Answer<'getBotTestRun', 200>;
export type CallListQuery = Query<'listCalls'>;
export type CallPage = Answer<'listCalls', 200>;
export type CampaignCreate = Body<'createCampaign'>;
export type Campaign = Answer<'getCampaign', 200>;
export type CampaignListQuery = Query<'listCampaigns'>;
export type CampaignPage = Answer<'listCampaigns', 200>;
/** A contact of a campaign upload (JSON form; the API also takes text/csv). */
export type CampaignContactsAdd = Body<'addCampaignContacts'>;
export type CampaignContactsAdded = Answer<'addCampaignContacts', 200>;
export type CampaignContactListQuery = Query<'listCampaignContacts'>;
export type CampaignContactPage = Answer<'listCampaignContacts', 200>;
export type Bot = Answer<'getBot', 200>;
export type BotVersion = Answer<'getBotVersion', 200>;
export type BotVersionListQuery = Query<'listBotVersions'>;
export type BotVersionPage = Answer<'listBotVersions', 200>;
/** The error body every failure of the API has. */
export type ErrorBody = { error: { code: string; message: string; details?: unknown } };

type EventBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
/** A webhook delivery's body, by event type (the document's `webhooks`). */
export type WebhookEvent = EventBody<webhooks[keyof webhooks]['post']>;
export type WebhookEventType = WebhookEvent['type'];
