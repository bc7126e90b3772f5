// A keypad turn in a transcript (docs/design.md §9: `dtmf: true` entries): the keys, marked as keys rather
// than words, for the eye (⌨ 12) and for screen readers ("Keys pressed: 12").
import { html, type TemplateResult } from 'lit';

export function keysLine(role: 'user' | 'bot', digits: string): TemplateResult {
  return html`<span class="keys-mark" role="img" aria-label=${role === 'bot' ? 'Keys sent:' : 'Keys pressed:'}>⌨</span> <span class="keys">${digits}</span>`;
}
