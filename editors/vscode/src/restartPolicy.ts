/**
 * When a running sidecar dies, restart it — but not forever: at most `max` restarts within `windowMs`.
 * A server that never got running (bad command, import error) is not restarted at all.
 */
export class RestartPolicy {
  private times: number[] = [];
  constructor(readonly max = 5, readonly windowMs = 3 * 60_000, private readonly now: () => number = Date.now) {}

  /** Record a crash; true if a restart is allowed. */
  shouldRestart(): boolean {
    const t = this.now();
    this.times = this.times.filter((x) => t - x < this.windowMs);
    if (this.times.length >= this.max) return false;
    this.times.push(t);
    return true;
  }

  get recent(): number {
    const t = this.now();
    return this.times.filter((x) => t - x < this.windowMs).length;
  }

  reset(): void {
    this.times = [];
  }
}

/**
 * What a start-error notification's button does when clicked. VS Code gives extensions no way to take a notification
 * back, so one shown while the server could not start stays after it runs again: `ranSince` (the server got running
 * after the notification was shown) makes its Retry and Reinstall say so instead of restarting a running server.
 */
export function startErrorAction(choice: string | undefined, ranSince: boolean): string | undefined {
  if (ranSince && (choice === 'Retry' || choice === 'Reinstall')) return 'already running';
  return choice;
}
