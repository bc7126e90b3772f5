// A labelled form control: label, optional hint and error text, tied to the control by `for` and
// aria-describedby, with aria-invalid while the error shows. The page renders the control itself.
import { html, nothing, type TemplateResult } from 'lit';

interface ControlAttrs {
  id: string;
  describedBy: string | undefined;
  invalid: 'true' | 'false';
}

interface FieldOptions {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string | undefined;
  required?: boolean;
  class?: string;
}

export function field(opts: FieldOptions, control: (a: ControlAttrs) => TemplateResult): TemplateResult {
  const hintId = opts.hint ? `${opts.id}-hint` : '';
  const errorId = opts.error ? `${opts.id}-error` : '';
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return html`<div class="field ${opts.class ?? ''} ${opts.error ? 'has-error' : ''}">
    <label for=${opts.id}>${opts.label}${opts.required ? html`<span class="req" aria-hidden="true"> *</span>` : nothing}</label>
    ${control({ id: opts.id, describedBy, invalid: opts.error ? 'true' : 'false' })}
    ${opts.hint ? html`<p class="hint" id=${hintId}>${opts.hint}</p>` : nothing}
    ${opts.error ? html`<p class="error-text" id=${errorId}>${opts.error}</p>` : nothing}
  </div>`;
}

/** A checkbox with its label after it (the usual reading order for checkboxes). */
export function checkbox(opts: { id: string; label: string; checked: boolean; onChange: (checked: boolean) => void; hint?: string }): TemplateResult {
  const hintId = opts.hint ? `${opts.id}-hint` : undefined;
  return html`<div class="field checkbox">
    <input
      type="checkbox"
      id=${opts.id}
      .checked=${opts.checked}
      aria-describedby=${hintId ?? nothing}
      @change=${(e: Event) => opts.onChange((e.target as HTMLInputElement).checked)}
    />
    <label for=${opts.id}>${opts.label}</label>
    ${opts.hint ? html`<p class="hint" id=${hintId}>${opts.hint}</p>` : nothing}
  </div>`;
}

/** A form-level error banner; role=alert so screen readers announce it when it appears. */
export function errorBanner(message: string | null | undefined): TemplateResult | typeof nothing {
  return message ? html`<div class="banner banner-error" role="alert">${message}</div>` : nothing;
}
