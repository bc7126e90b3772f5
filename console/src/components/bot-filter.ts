// The bot filter of the lists and the dashboard: every bot, or one. A bot id the list of bots does not
// (yet) name, e.g. from a shared link, stays chosen under its id.
import { html, nothing } from 'lit';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { field } from './field.js';

export function botFilter(o: { id: string; bots: readonly Pick<Bot, 'id' | 'name'>[]; botId: string; onChange: (botId: string) => void }) {
  return field({ id: o.id, label: 'Bot' }, (a) =>
    html`<select id=${a.id} @change=${(e: Event) => o.onChange((e.target as HTMLSelectElement).value)}>
      <option value="" .selected=${!o.botId}>All bots</option>
      ${o.bots.map((b) => html`<option value=${b.id} .selected=${b.id === o.botId}>${b.name}</option>`)}
      ${o.botId && !o.bots.some((b) => b.id === o.botId) ? html`<option value=${o.botId} .selected=${true}>${o.botId}</option>` : nothing}
    </select>`,
  );
}
