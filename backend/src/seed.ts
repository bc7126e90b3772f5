// `node dist/seed.js admin` creates the first admin from ADMIN_EMAIL / ADMIN_PASSWORD;
// `node dist/seed.js demo-bot` creates the demo bot. Both are idempotent and never overwrite.
import { MongoClient } from 'mongodb';
import { seedAdmin } from './auth/seed.js';
import { newBotDoc } from './bots/routes.js';
import { COLLECTIONS, createIndexes } from './stores.js';
import { DEMO_BOT, DEMO_BOT_ID } from './demoBot.js';

const env = (name: string, fallback?: string) => {
  const v = process.env[name]?.trim();
  return v ? v : fallback;
};

async function run(what: string): Promise<string> {
  const missing = what === 'admin' ? ['ADMIN_EMAIL', 'ADMIN_PASSWORD'].filter((n) => !env(n)) : [];
  if (!['admin', 'demo-bot'].includes(what)) throw new Error('usage: seed.js admin|demo-bot');
  if (missing.length) throw new Error(`missing settings: ${missing.join(', ')}`);
  const client = new MongoClient(env('MONGODB_URI', 'mongodb://127.0.0.1:27017/')!, { serverSelectionTimeoutMS: 10_000 });
  await client.connect();
  try {
    const db = client.db(env('MONGODB_DB', 'voice_platform'));
    await createIndexes(db);
    if (what === 'admin') {
      const result = await seedAdmin(db, env('ADMIN_EMAIL')!, env('ADMIN_PASSWORD')!);
      return `admin ${env('ADMIN_EMAIL')!.toLowerCase()}: ${result === 'created' ? 'created' : 'already exists, unchanged'}`;
    }
    const doc = newBotDoc(DEMO_BOT, new Date(), DEMO_BOT_ID);
    const res = await db.collection(COLLECTIONS.bots).updateOne({ _id: DEMO_BOT_ID as never }, { $setOnInsert: doc }, { upsert: true });
    return `demo bot ${DEMO_BOT_ID}: ${res.upsertedCount ? 'created' : 'already exists, unchanged'}`;
  } finally {
    await client.close();
  }
}

run(process.argv[2] ?? 'admin').then(
  (msg) => console.log(`seed: ${msg}`),
  (err: unknown) => {
    console.error(`seed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
