// A bot's flow drawn as SVG (docs/design.md §18): the boxes and arrows layoutFlow placed, each box with its id and
// a marker for the start, a global node, a node that ends the call, or a node a transition names that is missing;
// each arrow labelled with its `when`. A list of the same transitions follows for screen readers.
import { html, nothing, svg } from 'lit';
import type { FlowGraph, GraphNode } from '../core/botFlow.js';

function tags(n: GraphNode): string {
  return [n.start ? '▶ start' : '', n.global ? '◆ global' : '', n.endCall ? '■ ends call' : '', n.missing ? '✕ missing' : ''].filter(Boolean).join(' · ');
}

export function flowGraph(g: FlowGraph) {
  if (!g.nodes.length) return html`<p class="hint" data-testid="flow-graph-empty">No flow: the bot follows its prompt (or its scripted policy) alone.</p>`;
  const count = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  return html`<div class="flow-graph-wrap">
      <svg class="flow-graph" data-testid="flow-graph" role="img" aria-label="Flow graph: ${count(g.nodes.length, 'node')}, ${count(g.edges.length, 'transition')}" viewBox="0 0 ${g.width} ${g.height}" width=${g.width} height=${g.height}>
        <defs>
          <marker id="flow-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"></path></marker>
          <marker id="flow-arrow-missing" class="missing" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"></path></marker>
        </defs>
        ${g.edges.map(
          (e) => svg`<g class="flow-edge ${e.missing ? 'missing' : ''}" data-from=${e.from} data-to=${e.to}>
            <path d=${e.d} marker-end=${e.missing ? 'url(#flow-arrow-missing)' : 'url(#flow-arrow)'}></path>
            ${e.label ? svg`<text class="flow-edge-label" x=${e.labelX} y=${e.labelY} text-anchor=${e.from === e.to ? 'start' : 'middle'} dominant-baseline="middle">${e.label}</text>` : nothing}
          </g>`,
        )}
        ${g.nodes.map(
          (n) => svg`<g class="flow-node ${n.start ? 'start' : ''} ${n.global ? 'global' : ''} ${n.endCall ? 'end' : ''} ${n.missing ? 'missing' : ''}" data-node=${n.id} transform="translate(${n.x} ${n.y})">
            <rect width=${n.width} height=${n.height} rx="8"></rect>
            <text class="flow-node-id" x=${n.width / 2} y="20" text-anchor="middle">${n.id}</text>
            <text class="flow-node-tags" x=${n.width / 2} y="38" text-anchor="middle">${tags(n)}</text>
          </g>`,
        )}
      </svg>
    </div>
    <ul class="sr-only">
      ${g.edges.map((e) => html`<li>${e.from} to ${e.to}${e.label ? html` when ${e.label}` : nothing}</li>`)}
    </ul>`;
}
