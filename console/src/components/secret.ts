// A secret shown once (a new API key, a new user's one-time password): the warning, the value in a
// read-only input, a Copy button (or, where the browser blocks the clipboard, the value selected for
// Ctrl+C), and the copy's outcome. The page keeps the value only while its dialog is open.
import { html } from 'lit';

/** Copies `value`; where the clipboard is blocked, selects the input `inputId` instead. The line to show. */
export async function copySecret(value: string, inputId: string, what: string): Promise<string> {
  try {
    await navigator.clipboard.writeText(value);
    return 'Copied to the clipboard.';
  } catch {
    const input = document.getElementById(inputId) as HTMLInputElement | null;
    input?.focus();
    input?.select();
    return `Copying is blocked by the browser: the ${what} is selected, press Ctrl+C.`;
  }
}

/** The dialog's content: `id` names the input (its warning is `${id}-warning`). */
export function secretContent(o: { id: string; warning: string; label: string; value: string; copyStatus: string; onCopy: () => void }) {
  return html`<div class="banner banner-warn" role="alert" id="${o.id}-warning">${o.warning}</div>
    <label for=${o.id}>${o.label}</label>
    <div class="secret">
      <input id=${o.id} readonly .value=${o.value} aria-describedby="${o.id}-warning" @focus=${(e: Event) => (e.target as HTMLInputElement).select()} />
      <button class="primary" @click=${o.onCopy} autofocus>Copy</button>
    </div>
    <p class="hint" role="status" aria-live="polite">${o.copyStatus}</p>`;
}
