// A call's redaction (shared/DESIGN.md §16): the bot's entities masked (schemas/src/redact.ts) in all the
// call keeps, reports and logs: transcript entries, turns' user_text, actions' arguments, results and errors,
// and the string fields of the call's log lines. With redact_llm the model hears the caller masked too
// (RedactProcessor, between the recogniser and the LLM stage). A config from before the setting: nothing masked.
import { redactAction, redactionOf, redactText, type CallAction, type RedactionEntity } from '@voice-platform/schemas';
import type { Logger } from '../core/logger.js';
import type { Direction, Frame } from '../pipeline/frames.js';
import { FrameProcessor } from '../pipeline/processor.js';

export class CallRedaction {
  readonly entities: readonly RedactionEntity[];
  /** The live LLM gets the masked words too. */
  readonly llm: boolean;

  constructor(settings: { entities?: readonly string[]; redact_llm?: boolean } | null | undefined) {
    const r = redactionOf(settings);
    this.entities = r.entities;
    this.llm = r.redact_llm && r.entities.length > 0;
  }

  get active(): boolean {
    return this.entities.length > 0;
  }

  text(text: string): string {
    return redactText(text, this.entities);
  }

  action(a: CallAction): CallAction {
    return redactAction(a, this.entities);
  }

  /** The call's logger with every string field of a line masked (messages are the code's own constant text). */
  logger(log: Logger): Logger {
    if (!this.active) return log;
    const mask = (v: unknown): unknown => {
      if (typeof v === 'string') return this.text(v);
      if (Array.isArray(v)) return v.map(mask);
      // Plain objects only: an Error (the `err` serializer's) keeps its class; its message is masked in place below.
      if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mask(x)]));
      if (v instanceof Error) {
        const masked = this.text(v.message);
        return masked === v.message ? v : Object.assign(new Error(masked), { name: v.name });
      }
      return v;
    };
    return log.child({}, { formatters: { log: (obj) => mask(obj) as Record<string, unknown> } });
  }
}

/** redact_llm: the transcript frames the LLM stage acts on, masked (partial and final, spoken and keyed). */
export class RedactProcessor extends FrameProcessor {
  constructor(private readonly redaction: CallRedaction) {
    super('redact');
  }

  protected override async process(frame: Frame, dir: Direction): Promise<void> {
    if (frame.kind === 'transcript' && dir === 'downstream') return this.push({ ...frame, text: this.redaction.text(frame.text) }, dir);
    this.push(frame, dir);
  }
}
