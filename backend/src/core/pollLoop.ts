// A background pass run again `intervalMs` after the previous one ended (never two at once), until stopped: the
// dialler's runners (call analysis, bot tests) poll their work this way. A failed pass is reported and tried again.
export interface PollLoop {
  start(): void;
  /** Stops scheduling and waits for a pass under way to end. */
  stop(): Promise<void>;
}

export function pollLoop(pass: () => Promise<unknown>, intervalMs: number, onError: (err: unknown) => void): PollLoop {
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<unknown> | undefined;
  const schedule = () => {
    if (!running) return;
    timer = setTimeout(() => {
      passing = pass()
        .catch(onError)
        .finally(() => {
          passing = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  return {
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await passing;
    },
  };
}
