// `{{variable}}` templates: the shared parser and renderer (schemas/src/templates.ts).
export { placeholders, renderTemplate as render, templateFields } from '@voice-platform/schemas';
