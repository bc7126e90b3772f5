// How a keypad turn reads to the LLM (docs/design.md §9): the stage words the caller's keys this way, and
// the scripted policy reads the keys back out of it to match `dtmf` intents and fill `{{digits}}`. Shared
// with the backend's post-call analysis (schemas/src/intents.ts), which reads the transcript alike.
export { keypadTurn, keysOf } from '@voice-platform/schemas';
