// A bot's flow and handoff in the console, in headless Chromium against the real backend (docs/design.md §18):
// a bot created with a three-node flow typed as JSON, its graph drawn (nodes, their markers, arrows labelled with
// their `when`); a transition to a missing node named while typing and refused by the server with the same
// field, nothing stored; fixed with the editor's small forms and saved; then a handoff to another active bot
// (an inactive one not offered, and one gone inactive meanwhile refused at save by name).
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEFAULT_HANDOFF_FAILURE } from '@voice-platform/schemas/flow.js';
import { admin, launchPage, SHOTS, signInAt } from './support.js';

let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

const FLOW = {
  start: 'greet',
  nodes: {
    greet: { say: 'Hello.', transitions: [{ to: 'pay', when: { intent: 'wants_to_pay' } }] },
    pay: { say: 'Please pay now.', transitions: [{ to: 'done', when: { variable: { name: 'paid', equals: 'yes' } } }] },
    done: { say: 'Goodbye.', transitions: [], end_call: true },
  },
};
/** As stored: with the flow's defaults. */
const STORED_FLOW = { ...FLOW, global_nodes: [], context: 'append' };

beforeAll(async () => {
  ({ browser, page } = await launchPage());
  page.on('pageerror', (e) => pageErrors.push(e.message));
});
afterAll(async () => {
  await browser?.close();
});

const graph = () => page.getByTestId('flow-graph');
const flowText = () => page.getByRole('textbox', { name: 'Flow (JSON)' });

/** The drawing as data: each box's id and classes, each arrow's ends and label. */
async function drawn(): Promise<{ nodes: Array<[string, string]>; edges: Array<[string, string, string]> }> {
  const nodes = await graph()
    .locator('g.flow-node')
    .evaluateAll((els) => els.map((el) => [el.getAttribute('data-node')!, (el.getAttribute('class') ?? '').split(/\s+/).filter((c) => c && c !== 'flow-node').join(' ')] as [string, string]));
  const edges = await graph()
    .locator('g.flow-edge')
    .evaluateAll((els) => els.map((el) => [el.getAttribute('data-from')!, el.getAttribute('data-to')!, el.querySelector('text')?.textContent ?? ''] as [string, string, string]));
  return { nodes, edges };
}

describe('bot flows and handoff in the console', () => {
  let botId = '';

  it('creates a bot with a three-node flow and draws its graph', async () => {
    await signInAt(page, '/bots/new');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Flow e2e');
    await flowText().fill(JSON.stringify(FLOW, null, 2));
    await page.getByTestId('flow-status').filter({ hasText: 'No problems found in this flow.' }).waitFor();
    expect(await drawn()).toEqual({
      nodes: [
        ['greet', 'start'],
        ['pay', ''],
        ['done', 'end'],
      ],
      edges: [
        ['greet', 'pay', 'wants_to_pay'],
        ['pay', 'done', 'paid = "yes"'],
      ],
    });
    expect(await graph().locator('g[data-node="greet"] .flow-node-tags').textContent()).toBe('▶ start');
    expect(await graph().locator('g[data-node="done"] .flow-node-tags').textContent()).toBe('■ ends call');
    expect(await graph().getAttribute('aria-label')).toBe('Flow graph: 3 nodes, 2 transitions');
    // Rows by depth from start: each box below the one leading to it.
    const y = async (id: string) => (await graph().locator(`g[data-node="${id}"] rect`).boundingBox())!.y;
    expect(await y('greet')).toBeLessThan(await y('pay'));
    expect(await y('pay')).toBeLessThan(await y('done'));

    await page.getByRole('button', { name: 'Create bot' }).click();
    await page.getByRole('heading', { name: 'Edit bot: Flow e2e' }).waitFor();
    botId = new URL(page.url()).pathname.split('/').pop()!;
    const stored = (await admin('GET', `/api/v1/bots/${botId}`)).body;
    expect(stored.flow).toEqual(STORED_FLOW);
    expect(stored.handoff).toBeNull();
    expect(JSON.parse(await flowText().inputValue())).toEqual(STORED_FLOW);
    expect(pageErrors).toEqual([]);
  });

  it('names a transition to a missing node while typing, and the server refuses it; fixed with the small forms, it saves', async () => {
    const text = await flowText().inputValue();
    await flowText().fill(text.replace('"to": "done"', '"to": "finish"'));
    const problems = page.getByTestId('flow-problems');
    await problems.waitFor();
    expect(await problems.locator('li').allTextContents()).toEqual([
      'flow.nodes.pay.transitions.0.to names no node (finish)',
      'flow.nodes.done is unreachable from greet (no transition leads here and it is not a global node)',
      'flow has no way to end: no reachable node (or intent of one) has end_call',
    ]);
    expect(await page.getByTestId('flow-status').locator('p').first().textContent()).toBe('3 problems in this flow (the server refuses it until fixed):');
    expect(await flowText().getAttribute('aria-invalid')).toBe('true');
    // The graph draws the missing node, and the arrow to it, as such.
    expect((await drawn()).nodes).toEqual([
      ['greet', 'start'],
      ['pay', ''],
      ['done', 'end'],
      ['finish', 'missing'],
    ]);
    expect(await graph().locator('g.flow-edge.missing').getAttribute('data-to')).toBe('finish');

    // The save goes to the server, which names the same problems; nothing is stored.
    const answer = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/v1/bots/${botId}`));
    await page.getByRole('button', { name: 'Save changes' }).click();
    const res = await answer;
    expect(res.status()).toBe(422);
    expect(((await res.json()) as { error: { details: unknown[] } }).error.details).toEqual(
      expect.arrayContaining([{ field: 'flow.nodes.pay.transitions.0.to', message: 'names no node (finish)' }]),
    );
    const refused = page.getByTestId('flow-save-errors');
    await refused.waitFor();
    expect(await refused.locator('li').allTextContents()).toEqual(
      expect.arrayContaining(['flow.nodes.pay.transitions.0.to Names no node (finish).', 'flow Has no way to end: no reachable node (or intent of one) has end_call.']),
    );
    expect((await admin('GET', `/api/v1/bots/${botId}`)).body).toMatchObject({ version: 1, flow: STORED_FLOW });

    // The fix through the editor's forms: the bad transition removed, the right one added.
    await page.getByText('Add or remove a node or a transition').click();
    await page.getByLabel('Transition', { exact: true }).selectOption({ label: 'pay → finish (paid = "yes")' });
    await page.getByRole('button', { name: 'Remove transition' }).click();
    await page.getByLabel('From', { exact: true }).selectOption('pay');
    await page.getByLabel('To', { exact: true }).selectOption('done');
    await page.getByLabel('When', { exact: true }).selectOption('variable');
    await page.getByRole('textbox', { name: 'Variable (name=value)' }).fill('paid=yes');
    await page.getByRole('button', { name: 'Add transition' }).click();
    await page.getByTestId('flow-status').filter({ hasText: 'No problems found in this flow.' }).waitFor();
    expect(JSON.parse(await flowText().inputValue())).toEqual(STORED_FLOW);
    // The form is ready for the next one.
    expect(await page.getByRole('textbox', { name: 'Variable (name=value)' }).inputValue()).toBe('');
    expect((await drawn()).edges).toEqual([
      ['greet', 'pay', 'wants_to_pay'],
      ['pay', 'done', 'paid = "yes"'],
    ]);

    // A node added with the form shows at once (unreachable: named), and removed again.
    await page.getByLabel('New node id').fill('help');
    await page.getByRole('button', { name: 'Add node' }).click();
    expect(await page.getByLabel('New node id').inputValue()).toBe('');
    await page.getByTestId('flow-problems').filter({ hasText: 'flow.nodes.help is unreachable from greet' }).waitFor();
    expect((await drawn()).nodes.map(([id]) => id)).toEqual(['greet', 'pay', 'done', 'help']);
    await page.getByLabel('Node', { exact: true }).selectOption('help');
    await page.getByRole('button', { name: 'Remove node' }).click();
    await page.getByTestId('flow-status').filter({ hasText: 'No problems found in this flow.' }).waitFor();

    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    expect(await page.getByTestId('flow-save-errors').count()).toBe(0);
    expect((await admin('GET', `/api/v1/bots/${botId}`)).body.flow).toEqual(STORED_FLOW);
    await page.locator('#bot-flow-section').screenshot({ path: path.join(SHOTS, 'bot-flow.png') });
    expect(pageErrors).toEqual([]);
  });

  it('sets a handoff to another active bot; a target gone inactive is refused at save by name', async () => {
    const billing = (await admin('POST', '/api/v1/bots', { name: 'Billing desk e2e' })).body as { id: string };
    const old = (await admin('POST', '/api/v1/bots', { name: 'Old desk e2e', active: false })).body as { id: string };
    await page.reload();
    await page.getByRole('heading', { name: 'Edit bot: Flow e2e' }).waitFor();
    await page.getByLabel('Let this bot hand calls to other bots').check();
    const bots = page.getByTestId('handoff-bots');
    await bots.getByLabel('Billing desk e2e').waitFor();
    expect(await bots.getByLabel('Old desk e2e').count()).toBe(0);
    expect(await bots.getByLabel('Flow e2e', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('textbox', { name: 'Said when the handoff fails' }).inputValue()).toBe(DEFAULT_HANDOFF_FAILURE);
    await bots.getByLabel('Billing desk e2e').check();
    await page.getByLabel('The other bot says its greeting when it takes the call').uncheck();

    // Gone inactive since the page listed it: the server names it.
    expect((await admin('PATCH', `/api/v1/bots/${billing.id}`, { active: false })).status).toBe(200);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await bots.getByText(`Billing desk e2e: Bot ${billing.id} is inactive.`).waitFor();
    expect((await admin('GET', `/api/v1/bots/${botId}`)).body.handoff).toBeNull();

    expect((await admin('PATCH', `/api/v1/bots/${billing.id}`, { active: true })).status).toBe(200);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    expect((await admin('GET', `/api/v1/bots/${botId}`)).body.handoff).toEqual({ bots: [billing.id], greeting: false, on_failure: DEFAULT_HANDOFF_FAILURE });
    expect(old.id).not.toBe(billing.id);
    await page.locator('#bot-handoff').screenshot({ path: path.join(SHOTS, 'bot-handoff.png') });
    expect(pageErrors).toEqual([]);
  });
});
