// A counting semaphore whose waiters give up after a deadline: bounds CPU-heavy work (password hashing) per
// process, so a burst queues briefly and the excess is refused instead of slowing everyone down.
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<{ grant: () => void; timer: NodeJS.Timeout }> = [];

  constructor(private readonly max: number) {}

  /** Runs `fn` once a slot is free; undefined (and `fn` never runs) when none frees up within `waitMs`. */
  async run<T>(waitMs: number, fn: () => Promise<T>): Promise<{ value: T } | undefined> {
    if (!(await this.acquire(waitMs))) return undefined;
    try {
      return { value: await fn() };
    } finally {
      this.release();
    }
  }

  private acquire(waitMs: number): Promise<boolean> {
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const waiter = {
        grant: () => resolve(true),
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          resolve(false);
        }, waitMs),
      };
      this.waiters.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiters.shift();
    if (next) {
      clearTimeout(next.timer); // the slot passes straight to the next waiter: `active` is unchanged
      next.grant();
    } else this.active--;
  }
}
