// `node dist/seed.js admin` creates the first admin from ADMIN_EMAIL / ADMIN_PASSWORD;
// `node dist/seed.js demo-bot` creates the demo bot. Both are idempotent and never overwrite.
import { MongoClient } from 'mongodb';
import { seedAdmin } from './auth/seed.js';
import { createIndexes, migrateBots } from './stores.js';
import { DEMO_BOT_ID, seedDemoBot } from './demoBot.js';

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
    // A demo bot seeded by an older version gets the fields it lacks (their defaults, nothing else).
    await migrateBots(db);
    const result = await seedDemoBot(db, new Date());
    return `demo bot ${DEMO_BOT_ID}: ${result === 'created' ? 'created' : 'already exists, unchanged'}`;
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
