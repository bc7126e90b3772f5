// Knowledge bases (shared/DESIGN.md §18): the bases with their document and chunk counts, one created by name,
// a base's documents (type, size, chunks) with an upload (text, Markdown, HTML, PDF; at most 10 MB, checked
// before sending), and a document or an unused base deleted after confirming. Bots pick bases on their page.
import { html, nothing } from 'lit';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { may } from '../core/permissions.js';
import type { KnowledgeBase, KnowledgeDocument } from '@voice-platform/schemas/knowledge.js';

const MAX_BYTES = 10 * 1024 * 1024;
/** What the backend takes, by file name when the browser gives no type (Markdown often has none). */
const TYPES: Record<string, string> = { txt: 'text/plain', md: 'text/markdown', markdown: 'text/markdown', html: 'text/html', htm: 'text/html', pdf: 'application/pdf' };

const size = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

export class VpKnowledgePage extends LightElement {
  static override properties = {
    bases: { state: true },
    selected: { state: true },
    documents: { state: true },
    name: { state: true },
    nameError: { state: true },
    uploadError: { state: true },
    error: { state: true },
    notice: { state: true },
    busy: { state: true },
    confirming: { state: true },
  };
  declare bases: KnowledgeBase[] | null;
  declare selected: string | null;
  declare documents: KnowledgeDocument[] | null;
  declare name: string;
  declare nameError: string | null;
  declare uploadError: string | null;
  declare error: string | null;
  declare notice: string | null;
  declare busy: boolean;
  /** What a delete waits to be confirmed for. */
  declare confirming: { kind: 'base'; base: KnowledgeBase } | { kind: 'document'; doc: KnowledgeDocument } | null;

  constructor() {
    super();
    this.bases = null;
    this.selected = null;
    this.documents = null;
    this.name = '';
    this.nameError = null;
    this.uploadError = null;
    this.error = null;
    this.notice = null;
    this.busy = false;
    this.confirming = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      this.bases = (await api.listKnowledgeBases()).items;
      if (this.selected && !this.bases.some((b) => b.id === this.selected)) this.selected = null;
      this.selected ??= this.bases[0]?.id ?? null;
      this.documents = this.selected ? (await api.listKnowledgeDocuments(this.selected)).items : null;
      this.error = null;
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not load the knowledge bases.';
    }
  }

  private async select(id: string): Promise<void> {
    this.selected = id;
    this.documents = null;
    this.uploadError = null;
    await this.load();
  }

  private async create(e: Event): Promise<void> {
    e.preventDefault();
    if (!this.name.trim()) {
      this.nameError = 'Enter a name.';
      return;
    }
    this.busy = true;
    try {
      const kb = await api.createKnowledgeBase({ name: this.name.trim() });
      this.name = '';
      this.nameError = null;
      this.notice = `${kb.name} created: upload its documents below.`;
      this.selected = kb.id;
      await this.load();
    } catch (err) {
      this.nameError = err instanceof ApiError ? err.message : 'Could not create the knowledge base.';
    } finally {
      this.busy = false;
    }
  }

  private async upload(e: Event): Promise<void> {
    e.preventDefault();
    const input = this.querySelector<HTMLInputElement>('#kb-file');
    const picked = input?.files?.[0];
    if (!picked || !this.selected) {
      this.uploadError = 'Choose a file.';
      return;
    }
    const ext = picked.name.split('.').pop()?.toLowerCase() ?? '';
    const type = Object.values(TYPES).includes(picked.type) ? picked.type : TYPES[ext];
    if (!type) this.uploadError = 'A document is text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf).';
    else if (picked.size > MAX_BYTES) this.uploadError = `${picked.name} is ${size(picked.size)}: a document is at most 10 MB.`;
    else this.uploadError = null;
    if (this.uploadError) return;
    this.busy = true;
    try {
      const doc = await api.uploadKnowledgeDocument(this.selected, new File([picked], picked.name, { type }));
      this.notice = `${doc.filename} added: ${doc.chunk_count} ${doc.chunk_count === 1 ? 'chunk' : 'chunks'}.`;
      if (input) input.value = '';
      await this.load();
    } catch (err) {
      this.uploadError = err instanceof ApiError ? err.message : 'Could not upload the document.';
    } finally {
      this.busy = false;
    }
  }

  private async confirmDelete(): Promise<void> {
    const c = this.confirming;
    if (!c) return;
    this.busy = true;
    try {
      if (c.kind === 'base') await api.deleteKnowledgeBase(c.base.id);
      else await api.deleteKnowledgeDocument(c.doc.knowledge_base_id, c.doc.id);
      this.notice = c.kind === 'base' ? `${c.base.name} deleted.` : `${c.doc.filename} deleted: its chunks are gone from the bots' answers.`;
      this.confirming = null;
      await this.load();
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not delete.';
      this.confirming = null;
    } finally {
      this.busy = false;
    }
  }

  private renderBases() {
    if (!this.bases) return html`<p class="hint">Loading the knowledge bases…</p>`;
    if (!this.bases.length) return html`<p class="hint" data-testid="kb-empty">No knowledge bases yet.</p>`;
    return html`<div class="table-wrap"><table aria-label="Knowledge bases">
      <thead><tr><th scope="col">Name</th><th scope="col">Documents</th><th scope="col">Chunks</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${this.bases.map(
          (b) => html`<tr data-kb=${b.id} aria-selected=${b.id === this.selected ? 'true' : 'false'}>
            <td><button class="link" @click=${() => this.select(b.id)} aria-current=${b.id === this.selected ? 'true' : 'false'}>${b.name}</button></td>
            <td>${b.document_count}</td>
            <td>${b.chunk_count}</td>
            <td class="row-actions">${may('DELETE /api/v1/knowledge-bases/{id}') ? html`<button class="danger" @click=${() => (this.confirming = { kind: 'base', base: b })}>Delete</button>` : nothing}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  private renderDocuments() {
    const base = this.bases?.find((b) => b.id === this.selected);
    if (!base) return nothing;
    return html`<section class="panel" aria-labelledby="kb-docs-heading">
      <h2 id="kb-docs-heading">Documents of ${base.name}</h2>
      ${may('POST /api/v1/knowledge-bases/{id}/documents')
        ? html`<form id="kb-upload" novalidate @submit=${(e: Event) => this.upload(e)}>
            ${field({ id: 'kb-file', label: 'Document', error: this.uploadError ?? undefined, hint: 'Text, Markdown, HTML or PDF, at most 10 MB. It is split into passages the bots retrieve each turn.' }, (a) =>
              html`<input id=${a.id} type="file" accept=".txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @change=${() => (this.uploadError = null)} />`,
            )}
            <button class="primary" type="submit" ?disabled=${this.busy}>Upload</button>
          </form>`
        : nothing}
      ${!this.documents
        ? html`<p class="hint">Loading the documents…</p>`
        : !this.documents.length
          ? html`<p class="hint" data-testid="kb-docs-empty">No documents yet.</p>`
          : html`<div class="table-wrap"><table aria-label="Documents">
              <thead><tr><th scope="col">File</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Chunks</th><th scope="col">Added</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>
                ${this.documents.map(
                  (d) => html`<tr data-document=${d.filename}>
                    <td>${d.filename}</td><td><code>${d.content_type}</code></td><td>${size(d.size_bytes)}</td><td>${d.chunk_count}</td>
                    <td>${new Date(d.created_at).toLocaleString()}</td>
                    <td class="row-actions">${may('DELETE /api/v1/knowledge-bases/{id}/documents/{documentId}') ? html`<button class="danger" @click=${() => (this.confirming = { kind: 'document', doc: d })}>Delete</button>` : nothing}</td>
                  </tr>`,
                )}
              </tbody>
            </table></div>`}
    </section>`;
  }

  private renderConfirm() {
    const c = this.confirming;
    if (!c) return nothing;
    const what = c.kind === 'base' ? c.base.name : c.doc.filename;
    return html`<div class="panel" role="alertdialog" aria-labelledby="kb-confirm-title">
      <h2 id="kb-confirm-title">Delete ${what}?</h2>
      <p>${c.kind === 'base' ? 'Its documents and their passages are deleted too. A base a bot uses cannot be deleted.' : 'Its passages are removed from the bots\u2019 answers.'}</p>
      <button class="danger" ?disabled=${this.busy} @click=${() => this.confirmDelete()}>Delete</button>
      <button @click=${() => (this.confirming = null)}>Cancel</button>
    </div>`;
  }

  override render() {
    return html`<h1 tabindex="-1">Knowledge bases</h1>
      <p class="subtitle">Documents bots answer from: each caller turn retrieves the best passages of the bot's bases.</p>
      ${this.notice ? html`<div class="banner" role="status">${this.notice}</div>` : nothing}
      ${errorBanner(this.error)}
      ${may('POST /api/v1/knowledge-bases')
        ? html`<form class="toolbar" id="kb-create" novalidate @submit=${(e: Event) => this.create(e)}>
            ${field({ id: 'kb-name', label: 'New knowledge base', error: this.nameError ?? undefined }, (a) =>
              html`<input id=${a.id} .value=${this.name} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} />`,
            )}
            <button class="primary" type="submit" ?disabled=${this.busy}>Create</button>
          </form>`
        : nothing}
      ${this.renderBases()} ${this.renderConfirm()} ${this.renderDocuments()}`;
  }
}
customElements.define('vp-knowledge-page', VpKnowledgePage);
