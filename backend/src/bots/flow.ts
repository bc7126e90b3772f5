// A bot's flow and handoff settings at save (shared/DESIGN.md §18): the graph's problems (the shared pure check,
// schemas flow.ts, which the console runs live too) and the bots a call may be handed to, each named in a 422.
import { flowProblems, HANDOFF_TOOL, type BotFlow, type HandoffSettings } from '@voice-platform/schemas';
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import type { FieldProblem } from '../core/validate.js';
import { bots } from './store.js';

type McpLike = ReadonlyArray<{ allowed_tools?: string[] }>;

/** The tool names a flow may name: the bot's, `handoff` when the bot may hand off, its MCP servers' allowed tools. */
export const flowToolNames = (tools: ReadonlyArray<{ name: string }>, handoff: HandoffSettings | null, mcp: McpLike = []): string[] => [
  ...tools.map((t) => t.name),
  ...(handoff ? [HANDOFF_TOOL] : []),
  ...mcp.flatMap((m) => m.allowed_tools ?? []),
];
/** An MCP server without `allowed_tools` offers whatever it lists at call start: any name may be one of its tools. */
const anyMcpTool = (mcp: McpLike) => mcp.some((m) => m.allowed_tools === undefined);

/** The graph check; also: the built-in handoff's name is taken by none of the bot's own tools. */
export function checkFlow(flow: BotFlow | null, tools: ReadonlyArray<{ name: string }>, handoff: HandoffSettings | null, mcp: McpLike = []): void {
  const problems: FieldProblem[] = flow ? flowProblems(flow, { tools: flowToolNames(tools, handoff, mcp), anyTool: anyMcpTool(mcp) }) : [];
  // Node intents follow the policy's rules: matched by examples or keys, acting with a tool the bot has.
  const known = new Set(flowToolNames(tools, handoff, mcp));
  const names = { has: (name: string) => known.has(name) || anyMcpTool(mcp) };
  for (const [id, node] of Object.entries(flow?.nodes ?? {})) {
    node.intents?.forEach((intent, i) => {
      const at = `flow.nodes.${id}.intents.${i}`;
      if ((intent.examples ?? []).length === 0 && intent.dtmf === undefined) problems.push({ field: `${at}.examples`, message: 'needs at least one example, or dtmf' });
      if (intent.action && !names.has(intent.action.tool)) problems.push({ field: `${at}.action.tool`, message: `${intent.action.tool} is not one of the bot's tools` });
    });
  }
  if (handoff) {
    const i = tools.findIndex((t) => t.name === HANDOFF_TOOL);
    if (i >= 0) problems.push({ field: `tools.${i}.name`, message: `${HANDOFF_TOOL} is the built-in handoff tool's name while handoff is set: rename this tool` });
  }
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}

/** Each bot a call may be handed to exists, is active and is not this bot. */
export async function checkHandoffBots(svc: Services, handoff: HandoffSettings | null, selfId: string | null): Promise<void> {
  if (!handoff) return;
  const found = await bots(svc.db)
    .find({ _id: { $in: handoff.bots } }, { projection: { _id: 1, active: 1 } })
    .toArray();
  const byId = new Map(found.map((b) => [b._id as string, b.active !== false]));
  const problems: FieldProblem[] = [];
  handoff.bots.forEach((id, i) => {
    const field = `handoff.bots.${i}`;
    if (id === selfId) problems.push({ field, message: 'is this bot itself' });
    else if (handoff.bots.indexOf(id) !== i) problems.push({ field, message: `${id} is listed twice` });
    else if (!byId.has(id)) problems.push({ field, message: `no bot has the id ${id}` });
    else if (!byId.get(id)) problems.push({ field, message: `bot ${id} is inactive` });
  });
  if (problems.length) throw apiError('validation_failed', { message: 'the bot is invalid', details: problems });
}
