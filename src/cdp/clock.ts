/**
 * Maps the adapter's local monotonic clock (performance.now(), ms) to CDP's monotonic seconds, so
 * Recorder.poll(now) can be called from a timer.
 *
 * Both clocks tick together, so CDP time = local time + an offset. An event is delivered after
 * the moment its timestamp names, never before: each one bounds the offset from below (CDP time
 * at delivery >= its timestamp), and the largest bound is the estimate. Chromium sends some
 * events well after their time: networkIdle ~0.5 s after the quiet it stamps, firstMeaningfulPaint
 * once it is known, a request's loadingFinished behind its data. Taking the latest event's time as
 * "now" at its delivery set the clock back by that delay, so a soft navigation 600 ms after load
 * began 580 ms in the past, its quiet period was over at the next poll, and its record ended
 * before its own fetch was reported (Chromium 156, the real-web test site's single-page app).
 */
export class CdpClock {
  private offset: number | null = null;

  observe(cdpSeconds: number, localMs: number): void {
    const offset = cdpSeconds - localMs / 1000;
    if (this.offset === null || offset > this.offset) this.offset = offset;
  }

  /** CDP time at local time `localMs`, or null before any event was seen. */
  now(localMs: number): number | null {
    return this.offset === null ? null : this.offset + localMs / 1000;
  }
}
