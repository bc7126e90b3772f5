// The demo bot `make up` seeds: a payment reminder that runs fully offline (espeak-ng, pocketsphinx,
// the scripted policy), its calls analysed offline after they end.
import { MongoServerError, type Db } from 'mongodb';
import type { BotCreate } from '@voice-platform/schemas';
import { newBotDoc } from './bots/routes.js';
import { bots, stored } from './bots/store.js';
import { insertFirstVersion, SYSTEM_ACTOR } from './bots/versions.js';

export const DEMO_BOT_ID = 'demo-bot';

const DEMO_BOT: BotCreate = {
  name: 'Demo: payment reminder',
  language: 'en-US',
  prompt: 'You are a polite assistant reminding {{customer_name}} about an open invoice of {{amount_due}}.',
  greeting: 'Hello {{customer_name}}, this is a friendly reminder from Example Company.',
  variables: [
    { name: 'customer_name', required: true, description: 'How to address the callee' },
    { name: 'amount_due', required: false, description: 'Open amount, spoken as given' },
  ],
  // "I will pay" records the promise in the CRM (make up runs a small one: tests/infra/src/crm.ts) and the bot
  // speaks the reference it answers.
  tools: [
    {
      name: 'record_promise',
      description: 'Records that the customer promised to pay the open amount',
      type: 'http',
      url: process.env.DEMO_CRM_URL ?? 'http://127.0.0.1:8091/promises',
      timeout_ms: 5000,
      parameters: { type: 'object', properties: { customer_name: { type: 'string' }, amount_due: { type: 'string' } }, required: ['customer_name'] },
    },
  ],
  policy: {
    intents: [
      {
        name: 'pay',
        examples: ['yes', 'i will pay', 'okay'],
        action: { tool: 'record_promise', arguments: { customer_name: '{{customer_name}}', amount_due: '{{amount_due}}' } },
        reply: 'Thank you {{customer_name}}, your promise is noted under reference {{result.reference}}. Goodbye.',
        on_error_reply: 'Thank you {{customer_name}}, goodbye.',
        end_call: true,
        sets: { outcome: 'promised' },
      },
      { name: 'amount', examples: ['how much', 'what amount'], reply: 'The open amount is {{amount_due}}.', sets: { asked_amount: true } },
      { name: 'stop', examples: ['no', 'stop calling', 'goodbye'], reply: 'Understood. Goodbye.', end_call: true, sets: { outcome: 'declined' } },
    ],
    fallback: { reply: 'Sorry, I did not catch that. Will you pay the open amount?' },
  },
  // After each answered call the dialler reads the transcript with the same intents (docs/design.md §10).
  analysis: {
    summary: true,
    fields: [
      { name: 'outcome', type: 'enum', values: ['promised', 'declined'], description: 'Whether the customer promised to pay' },
      { name: 'asked_amount', type: 'boolean', description: 'The customer asked how much is due' },
    ],
    success: 'The customer promised to pay: the pay intent matched.',
  },
};

/** Creates the demo bot with every field unless it exists; never overwrites an existing one. A plain
 *  insert, not an upsert with $setOnInsert: FerretDB's upsert drops the empty `tools: []`. */
export async function seedDemoBot(db: Db, now: Date): Promise<'created' | 'unchanged'> {
  try {
    const doc = newBotDoc(DEMO_BOT, now, null, DEMO_BOT_ID);
    await bots(db).insertOne(stored(doc));
    // After the bot: an existing demo bot (perhaps edited) never gets this text as its version 1.
    await insertFirstVersion(db, doc, SYSTEM_ACTOR);
    return 'created';
  } catch (err) {
    if (err instanceof MongoServerError && err.code === 11000) return 'unchanged';
    throw err;
  }
}
