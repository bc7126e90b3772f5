// A campaign's progress as a bar and words: contacts done (not pending, dialling or waiting for a retry)
// of all, as a progressbar for assistive technology.
import { html, type TemplateResult } from 'lit';
import { campaignProgress, type CampaignCounts } from '../core/campaignForm.js';

export function progressBar(counts: CampaignCounts, label: string): TemplateResult {
  const { done, total, percent } = campaignProgress(counts);
  const text = `${done} of ${total} done (${percent}%)`;
  return html`<div class="progress" role="progressbar" aria-label=${label} aria-valuemin="0" aria-valuemax=${total} aria-valuenow=${done} aria-valuetext=${text}
      data-testid="progress" data-done=${done} data-total=${total}>
    <div class="progress-track"><div class="progress-fill" style=${`width: ${percent}%`}></div></div>
    <span class="progress-text">${text}</span>
  </div>`;
}
