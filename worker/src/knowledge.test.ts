// End to end (shared/DESIGN.md §18) on real services: FerretDB, Redis, MinIO, the real backend and the worker
// with its offline providers, driven by a WebSocket caller speaking in real time. A bot answers from a document
// uploaded to its knowledge base (the scripted policy's {{knowledge}}: the passage the backend retrieved for the
// caller's words), and a bot calls a tool of an MCP server (made with the official SDK) during a call.
import { silence, speech } from '../testing/audio.js';
import { admin, adminAuth, backendUrl, callUntil, createBot } from '../testing/backend.js';
import { TestCaller, withTestCallToken } from '../testing/client.js';
import { startWorker, type TestWorker } from '../testing/worker.js';
import { startMcpServer, type TestMcpServer } from '../testing/mcp.js';

let w: TestWorker;
let mcp: TestMcpServer;
beforeAll(async () => {
  mcp = await startMcpServer([
    {
      name: 'open_amount',
      description: 'The amount the caller owes',
      inputSchema: { type: 'object', properties: {} },
      handler: () => ({ content: [{ type: 'text', text: 'forty two dollars' }], structuredContent: { due: 'monday' } }),
    },
  ]);
  w = await startWorker({ TOOLS_ALLOW_PRIVATE_ADDRESSES: 'true' });
});
afterAll(async () => {
  await w?.stop();
  await mcp?.close();
});

async function upload(kb: string, filename: string, text: string): Promise<void> {
  const res = await fetch(`${backendUrl()}/api/v1/knowledge-bases/${kb}/documents`, { method: 'POST', headers: { Authorization: await adminAuth(), 'Content-Type': 'text/plain', 'X-Filename': filename }, body: text });
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
}

/** One call: the caller says `phrase`, the bot answers and hangs up; the bot's words and the call's id. */
async function call(botId: string, phrase: string): Promise<{ said: string[]; callId: string }> {
  const caller = new TestCaller(withTestCallToken(`${w.wsUrl}/ws/${botId}`));
  await caller.opened;
  caller.send({ type: 'start', variables: {} });
  const started = await caller.until(() => caller.message('started'), 'started');
  await caller.stream(silence(300));
  await caller.stream(speech(phrase));
  await caller.stream(silence(900));
  await caller.until(() => caller.closeCode !== null, 'the call to end');
  return { said: caller.messages.filter((m) => m.type === 'transcript' && m.role === 'bot').map((m) => m.text as string), callId: started.call_id as string };
}

it('answers from a document uploaded to the bot knowledge base', async () => {
  const kb = await admin('POST', '/api/v1/knowledge-bases', { name: 'Billing answers' });
  expect(kb.status).toBe(201);
  await upload(kb.body.id, 'amounts.txt', 'How much you owe is forty dollars.');
  await upload(kb.body.id, 'opt-out.txt', 'Requests to stop calling are honoured within one day.');
  const botId = await createBot({
    name: 'knowledgeable',
    knowledge_base_ids: [kb.body.id],
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 60,
    policy: { intents: [{ name: 'ask', examples: ['how much', 'stop calling'], reply: '{{knowledge}}', end_call: true }], fallback: { reply: 'Sorry.', end_call: true } },
  });
  expect((await call(botId, 'how much')).said).toEqual(['How much you owe is forty dollars.']);
  expect((await call(botId, 'stop calling')).said).toEqual(['Requests to stop calling are honoured within one day.']);
}, 90_000);

it('calls an MCP server tool during a call and records it as an action', async () => {
  const botId = await createBot({
    name: 'mcp caller',
    mcp_servers: [{ name: 'billing', url: mcp.url, headers: { Authorization: 'Bearer billing-token' }, allowed_tools: ['open_amount'] }],
    turn_detection: { end_of_turn_silence_ms: 600 },
    max_call_seconds: 60,
    policy: { intents: [{ name: 'ask', examples: ['how much'], action: { tool: 'open_amount' }, reply: 'You owe {{result.text}} by {{result.due}}.', end_call: true }], fallback: { reply: 'Sorry.', end_call: true } },
  });
  const { said, callId } = await call(botId, 'how much');
  expect(said).toEqual(['You owe forty two dollars by monday.']);
  expect(mcp.calls.map((c) => [c.name, c.headers.authorization])).toEqual([['open_amount', 'Bearer billing-token']]);
  const record = await callUntil(callId, (c) => c.status === 'completed' && (c.actions?.length ?? 0) > 0, 'the action on the record');
  expect(record.actions).toEqual([expect.objectContaining({ type: 'tool', name: 'open_amount', status: 'ok', result: JSON.stringify({ due: 'monday', text: 'forty two dollars' }), error: null })]);
}, 90_000);
