// A one-shot message carried across a navigation (e.g. "Bot created." on the page the form leads to).
let pending: string | null = null;
export const setFlash = (message: string): void => {
  pending = message;
};
export const takeFlash = (): string | null => {
  const m = pending;
  pending = null;
  return m;
};
