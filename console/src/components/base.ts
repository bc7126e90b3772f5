// Pages and most components render into light DOM: one global stylesheet, and ids that labels,
// aria-describedby and aria-labelledby can reference across the whole document.
import { LitElement } from 'lit';

export class LightElement extends LitElement {
  protected override createRenderRoot(): HTMLElement {
    return this;
  }
}
