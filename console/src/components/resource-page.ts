// What the list/create/edit/delete pages (outbound trunks, inbound numbers, webhooks) share: the list
// loaded on connect (its error in a banner, a loading line), the create/edit dialog with its form (a
// field's error cleared once it is edited, the first invalid field focused, nothing sent when nothing
// changed), and the delete confirmation. Each page says what its items are, how a form becomes a
// request, and what its rows and texts look like.
import { html, nothing, type PropertyDeclarations } from 'lit';
import { LightElement } from './base.js';
import { errorBanner } from './field.js';
import { ApiError } from '../api.js';
import type { FieldErrors } from '../validation.js';

export type Editing<T> = { mode: 'create' } | { mode: 'edit'; item: T };

/** The body a form makes, its problems, and the request that sends it. */
export interface Prepared<B, S> {
  body: B;
  errors: FieldErrors;
  send: () => Promise<S>;
}

/** A page's own sentences for what went wrong without the backend's words. */
export interface FailureTexts {
  load: string;
  save: string;
  delete: string;
}

/**
 * `T`: a listed item; `F`: the dialog's form; `B`: the request body the form makes; `S`: what saving answers.
 */
export abstract class ResourcePage<T, F, B extends object = object, S = T> extends LightElement {
  static override properties: PropertyDeclarations = {
    items: { state: true },
    loadError: { state: true },
    notice: { state: true },
    editing: { state: true },
    form: { state: true },
    errors: { state: true },
    formError: { state: true },
    busy: { state: true },
    deleting: { state: true },
    deleteError: { state: true },
  };
  declare items: T[] | null;
  declare loadError: string | null;
  declare notice: string | null;
  declare editing: Editing<T> | null;
  declare form: F;
  declare errors: FieldErrors;
  declare formError: string | null;
  declare busy: boolean;
  declare deleting: T | null;
  declare deleteError: string | null;

  /** The id of the dialog's form element. */
  protected abstract readonly formId: string;
  protected abstract readonly failed: FailureTexts;

  constructor() {
    super();
    this.items = null;
    this.loadError = null;
    this.notice = null;
    this.editing = null;
    this.form = this.emptyForm();
    this.errors = {};
    this.formError = null;
    this.busy = false;
    this.deleting = null;
    this.deleteError = null;
  }

  /** A blank form: the create dialog's start, and what is left once the dialog closes. */
  protected abstract emptyForm(): F;
  /** Reads the list (and whatever else the page shows with it) into the page's state. */
  protected abstract fetchAll(): Promise<void>;
  protected abstract prepare(editing: Editing<T>): Prepared<B, S>;
  /** After a successful save (the dialog closed already, the list not yet read again). */
  protected abstract saved(saved: S, editing: Editing<T>): void;
  /** The backend refused the save: its problems go on the fields and in the banner. */
  protected abstract saveRefused(err: ApiError, body: B): void | Promise<void>;
  protected abstract removeItem(item: T): Promise<void>;
  /** After a successful delete (the confirmation closed already, the list not yet read again). */
  protected abstract deleted(item: T): void;

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  protected async load(): Promise<void> {
    try {
      await this.fetchAll();
      this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : this.failed.load;
    }
  }

  protected openForm(editing: Editing<T>, form: F): void {
    this.editing = editing;
    this.form = form;
    this.errors = {};
    this.formError = null;
    this.notice = null;
  }

  /** Closes the dialog and forgets everything typed in it. */
  protected closeForm(): void {
    this.editing = null;
    this.form = this.emptyForm();
    this.errors = {};
    this.formError = null;
  }

  protected set(patch: Partial<F>, errorKey?: string): void {
    this.form = { ...this.form, ...patch };
    // A field's error goes once it is edited; the next save checks again.
    if (errorKey && this.errors[errorKey]) this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => k !== errorKey));
  }

  protected async focusInvalid(): Promise<void> {
    await this.updateComplete;
    this.querySelector<HTMLElement>(`#${this.formId} [aria-invalid="true"]`)?.focus();
  }

  protected async save(e: Event): Promise<void> {
    e.preventDefault();
    const editing = this.editing;
    if (!editing || this.busy) return;
    this.formError = null;
    const { body, errors, send } = this.prepare(editing);
    this.errors = errors;
    if (Object.keys(errors).length) {
      this.formError = 'Fix the highlighted fields and save again.';
      return this.focusInvalid();
    }
    if (!Object.keys(body).length) {
      this.closeForm(); // nothing changed: nothing to send
      return;
    }
    this.busy = true;
    try {
      const saved = await send();
      this.closeForm();
      this.saved(saved, editing);
      await this.load();
    } catch (err) {
      if (err instanceof ApiError) await this.saveRefused(err, body);
      else this.formError = this.failed.save;
      await this.focusInvalid();
    } finally {
      this.busy = false;
    }
  }

  protected async deleteItem(): Promise<void> {
    const item = this.deleting;
    if (!item || this.busy) return;
    this.busy = true;
    this.deleteError = null;
    try {
      await this.removeItem(item);
      this.deleting = null;
      this.deleted(item);
      await this.load();
    } catch (err) {
      this.deleteError = err instanceof ApiError ? err.message : this.failed.delete;
    } finally {
      this.busy = false;
    }
  }

  /** The heading, the "New …" button once there are items, and the notice. */
  protected renderHead(title: string, subtitle: string, newLabel: string) {
    return html`<div class="page-head">
        <div><h1 tabindex="-1">${title}</h1>
          <p class="subtitle">${subtitle}</p></div>
        ${this.items?.length ? html`<button class="primary" @click=${() => this.openCreate()}>${newLabel}</button>` : nothing}
      </div>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}`;
  }

  protected abstract openCreate(): void;

  /** The load error or the loading line while there is no list; null once the list is there. */
  protected renderListState(loading: string): ReturnType<typeof errorBanner> | null {
    if (this.loadError) return errorBanner(this.loadError);
    if (!this.items) return html`<p class="loading" role="status">${loading}</p>`;
    return null;
  }

  /** A row's Delete button: it opens the confirmation. */
  protected renderDeleteButton(item: T, name: string) {
    return html`<button class="small link-danger" aria-label="Delete ${name}" @click=${() => {
      this.deleting = item;
      this.deleteError = null;
    }}>Delete</button>`;
  }

  /** The create/edit dialog around `content` (the form). */
  protected renderFormDialog(heading: string, createLabel: string, content: (editing: Editing<T>) => unknown) {
    const editing = this.editing;
    return html`<vp-dialog
        heading=${heading}
        .open=${editing !== null}
        @vp-close=${() => this.closeForm()}
        .content=${editing ? content(editing) : nothing}
        .actions=${html`<button type="button" @click=${() => this.closeForm()}>Cancel</button>
          <button class="primary" type="submit" form=${this.formId} ?disabled=${this.busy}>${editing?.mode === 'edit' ? 'Save changes' : createLabel}</button>`}
      ></vp-dialog>`;
  }

  /** The delete confirmation; `content` renders the item being deleted. */
  protected renderDeleteDialog(heading: string, deleteLabel: string, content: (item: T) => unknown) {
    const d = this.deleting;
    return html`<vp-dialog
        heading=${heading}
        .open=${d !== null}
        @vp-close=${() => (this.deleting = null)}
        .content=${d ? content(d) : nothing}
        .actions=${html`<button @click=${() => (this.deleting = null)} autofocus>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.deleteItem()}>${deleteLabel}</button>`}
      ></vp-dialog>`;
  }
}
