// What the console's list pages share: the list loaded on connect (its error in a banner, a loading line),
// cursor pages ("Show more"), the notice, the create/edit dialog with its form (a field's error cleared once
// it is edited, the first invalid field focused, nothing sent when nothing changed), and the delete (or
// remove, deactivate) confirmation. Each page says what its items are, how a form becomes a request, and
// what its rows and texts look like. A page without a dialog form (or without deleting) leaves those hooks
// as they are here. Buttons the signed-in user's role may not use are not shown (`may`, permissions.ts).
// A page whose list follows the URL (filters in the query) or refreshes itself keeps that in the page and
// calls `load` when it should read again.
import { html, nothing, type PropertyDeclarations } from 'lit';
import { LightElement } from './base.js';
import { errorBanner } from './field.js';
import { ApiError } from '../core/api.js';
import type { FieldErrors } from '../core/validation.js';
import { may } from '../core/permissions.js';

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
    nextCursor: { state: true },
    loadingMore: { state: true },
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
  /** The next page's cursor (a page that reads its list in pages sets it in fetchAll). */
  declare nextCursor: string | null;
  /** While the next page is read ("Show more" says so and waits). */
  declare loadingMore: boolean;

  /** The id of the dialog's form element. */
  protected readonly formId: string = 'resource-form';
  protected abstract readonly failed: FailureTexts;
  /** The banner over a form with invalid fields. */
  protected readonly invalidText: string = 'Fix the highlighted fields and save again.';
  /** Whether the list is read again after a save (not when `saved` leaves the page). */
  protected readonly reloadAfterSave: boolean = true;

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
    this.nextCursor = null;
    this.loadingMore = false;
  }

  /** Reads the list (and whatever else the page shows with it) into the page's state; `more`: the next
   *  page (at `nextCursor`) goes after the items there are. `false`: the answer came too late to show (a
   *  newer read, e.g. of other filters, is under way) and the page's state is as it was. */
  protected abstract fetchAll(more: boolean): Promise<void | false>;

  // The dialog form's hooks: a page with a create/edit dialog overrides them.
  /** A blank form: the create dialog's start, and what is left once the dialog closes. */
  protected emptyForm(): F {
    return {} as F;
  }
  protected prepare(_editing: Editing<T>): Prepared<B, S> {
    throw new Error(`${this.localName} has no form`);
  }
  /** After a successful save (the dialog closed already, the list not yet read again). */
  protected saved(_saved: S, _editing: Editing<T>): void {}
  /** The backend refused the save: its problems go on the fields and in the banner. */
  protected saveRefused(err: ApiError, _body: B): void | Promise<void> {
    this.errors = err.fieldErrors;
    this.formError = err.message;
  }
  /** Opens the create dialog (the head's "New …" button). */
  protected openCreate(): void {}

  // The delete confirmation's hooks: a page that deletes (removes, deactivates) overrides them.
  protected removeItem(_item: T): Promise<void> {
    throw new Error(`${this.localName} deletes nothing`);
  }
  /** After a successful delete (the list not yet read again, the confirmation still open). */
  protected deleted(_item: T): void {}

  /** Whether the signed-in user's role may call `op` (`METHOD /api/v1/path/{param}`, docs/roles.md). */
  protected may(op: string): boolean {
    return may(op);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  protected async load(opts: { more?: boolean } = {}): Promise<void> {
    const more = !!opts.more;
    if (more) this.loadingMore = true;
    try {
      if ((await this.fetchAll(more)) !== false) this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : this.failed.load;
    } finally {
      if (more) this.loadingMore = false;
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
      this.formError = this.invalidText;
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
      if (this.reloadAfterSave) await this.load(); // first: the notice and the rows then say the same
      this.saved(saved, editing);
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
      this.deleted(item);
      await this.load();
      this.deleting = null; // closed once the list is read again: the notice and the rows then say the same
    } catch (err) {
      this.deleteError = err instanceof ApiError ? err.message : this.failed.delete;
    } finally {
      this.busy = false;
    }
  }

  /**
   * The heading, the "New …" button (once there are items, when `create` is the operation it calls and the
   * role may call it; or `action`, a page's own button or link), and the notice.
   */
  protected renderHead(title: unknown, subtitle: unknown, newLabel?: string, create?: string, action?: unknown) {
    const button = newLabel && this.items?.length && (!create || this.may(create)) ? html`<button class="primary" @click=${() => this.openCreate()}>${newLabel}</button>` : nothing;
    return html`<div class="page-head">
        <div><h1 tabindex="-1">${title}</h1>
          <p class="subtitle">${subtitle}</p></div>
        ${action ?? button}
      </div>
      ${this.renderNotice()}`;
  }

  protected renderNotice() {
    return this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing;
  }

  /** "Show more" while there is a next page. */
  protected renderMore() {
    return this.nextCursor
      ? html`<button class="small" ?disabled=${this.loadingMore} @click=${() => this.load({ more: true })}>${this.loadingMore ? 'Loading…' : 'Show more'}</button>`
      : nothing;
  }

  /** The list's place when it is empty and creating is the first thing to do: what the items are for (one
   *  paragraph each), and `action`, usually `firstButton`. `name` makes the ids (`${name}-empty`). */
  protected renderEmptyState(name: string, heading: string, paragraphs: unknown[], action: unknown) {
    return html`<section class="panel empty-state" aria-labelledby="${name}-empty-heading" data-testid="${name}-empty">
      <h2 id="${name}-empty-heading">${heading}</h2>
      ${paragraphs.map((p) => html`<p>${p}</p>`)}
      ${action}
    </section>`;
  }

  /** The empty list's button that opens the create form, when the role may call `create`. */
  protected firstButton(label: string, create: string) {
    return this.may(create) ? html`<button class="primary" @click=${() => this.openCreate()}>${label}</button>` : nothing;
  }

  /** The load error or the loading line while there is no list; null once the list is there. */
  protected renderListState(loading: string): ReturnType<typeof errorBanner> | null {
    if (this.loadError) return errorBanner(this.loadError);
    if (!this.items) return html`<p class="loading" role="status">${loading}</p>`;
    return null;
  }

  /** A row's Delete (`verb`) button: it opens the confirmation. */
  protected renderDeleteButton(item: T, name: string, verb = 'Delete') {
    return html`<button class="small link-danger" aria-label="${verb} ${name}" @click=${() => {
      this.deleting = item;
      this.deleteError = null;
    }}>${verb}</button>`;
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
