// How a keypad turn reads to the LLM (docs/design.md §9): the stage words the caller's keys this way, and
// the scripted policy reads the keys back out of it to match `dtmf` intents and fill `{{digits}}`.

/** The user message of a keypad turn. */
export const keypadTurn = (digits: string) => `The caller pressed ${digits} on the keypad.`;

const KEYPAD_TURN = /^The caller pressed ([0-9*#]{1,32}) on the keypad\.$/;

/** The keys of a keypad turn, or null for spoken words. */
export const keysOf = (message: string): string | null => KEYPAD_TURN.exec(message.trim())?.[1] ?? null;
