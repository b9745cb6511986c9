/**
 * Maps the adapter's local monotonic clock (performance.now(), ms) to CDP's monotonic seconds,
 * from the last event that carried a timestamp, so Recorder.poll(now) can be called from a timer.
 */
export class CdpClock {
  private anchor: { cdp: number; local: number } | null = null;

  observe(cdpSeconds: number, localMs: number): void {
    if (this.anchor === null || cdpSeconds >= this.anchor.cdp) this.anchor = { cdp: cdpSeconds, local: localMs };
  }

  /** CDP time at local time `localMs`, or null before any event was seen. */
  now(localMs: number): number | null {
    return this.anchor === null ? null : this.anchor.cdp + (localMs - this.anchor.local) / 1000;
  }
}
