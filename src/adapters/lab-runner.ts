/**
 * Adapter: lab mode's navigation driver (docs/MESSAGES.md "Lab mode"). Opens one tab on
 * about:blank, attaches and enables the debugger BEFORE the first navigation (so nothing is
 * missed), then opens the `navigate` URLs in order, each after the previous record was acked
 * (`advance: "ack"`) or, with `advance: "record"`, once it is queued in the outbox (so a test can
 * navigate while the host is down). With a start time (`start_at_ms`) the first URL waits for
 * it: two lab browsers launched side by side without it opened their first URL 6-137 ms apart on the testbed
 * machine (lab fairness measured it), and the one that navigates first takes more of the link.
 */
import browser from "webextension-polyfill";
import type { LabAdvance } from "../messages/protocol.ts";
import type { NavigationRecord } from "../record/types.ts";

const STARTED_KEY = "labStarted";

export class LabRunner {
  private tabId: number | null = null;
  private queue: string[] = [];
  private waitingFor: string | null = null;
  private started = false;
  private advance: LabAdvance = "ack";

  constructor(private readonly attach: (tabId: number) => Promise<void>) {}

  get labTab(): number | null {
    return this.tabId;
  }

  async start(urls: readonly string[], advance: LabAdvance = "ack", startAtMs: number | null = null,
    now: () => number = Date.now): Promise<void> {
    if (this.started || urls.length === 0) return;
    this.started = true;
    this.advance = advance;
    // once per browser session: a restarted service worker must not replay the list
    if ((await browser.storage.session.get(STARTED_KEY))[STARTED_KEY] === true) return;
    await browser.storage.session.set({ [STARTED_KEY]: true });
    const tab = await browser.tabs.create({ url: "about:blank", active: true });
    if (tab.id === undefined) throw new Error("lab: the new tab has no id");
    this.tabId = tab.id;
    await this.attach(tab.id);
    this.queue = [...urls];
    const wait = startAtMs === null ? 0 : startAtMs - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else if (startAtMs !== null) console.warn(`protolens: lab start ${-wait} ms late`);
    await this.next();
  }

  /** A record came from a tab: if it is the lab tab's, its ack moves the lab on. */
  onRecord(tabId: number, record: NavigationRecord): void {
    if (tabId === this.tabId) this.waitingFor = record.id;
  }

  /** The record is in the outbox (persisted): with `advance: "record"` that moves the lab on. */
  async onQueued(record: NavigationRecord): Promise<void> {
    if (this.advance === "record") await this.onAck(record.id);
  }

  async onAck(recordId: string): Promise<void> {
    if (recordId !== this.waitingFor) return;
    this.waitingFor = null;
    await this.next();
  }

  private async next(): Promise<void> {
    const url = this.queue.shift();
    if (url !== undefined && this.tabId !== null) await browser.tabs.update(this.tabId, { url });
  }
}
