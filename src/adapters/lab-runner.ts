/**
 * Adapter: lab mode's navigation driver (docs/MESSAGES.md "Lab mode"). Opens one tab on
 * about:blank, attaches and enables the debugger BEFORE the first navigation (so nothing is
 * missed), then opens the `navigate` URLs in order, each after the previous record was acked
 * (`advance: "ack"`) or, with `advance: "record"`, once it is queued in the outbox (so a test can
 * navigate while the host is down). With a start time (`start_at_ms`) the first URL waits for
 * it: two lab browsers launched side by side without it opened their first URL 6-137 ms apart on the testbed
 * machine (lab fairness measured it), and the one that navigates first takes more of the link.
 * A standby browser (`hold`) waits after attaching until the host's `lab_go` (`go`), and says
 * `lab_loaded` when its last URL's tab has loaded: `lab run` starts the next load's browser during
 * the quiet that follows, so that a browser's start-up is off the campaign's clock.
 */
import browser from "webextension-polyfill";
import { MSG_SCHEMA, type ExtensionMsg, type LabAdvance } from "../messages/protocol.ts";
import type { NavigationRecord } from "../record/types.ts";

const STARTED_KEY = "labStarted";

export class LabRunner {
  private tabId: number | null = null;
  private queue: string[] = [];
  private waitingFor: string | null = null;
  private started = false;
  private advance: LabAdvance = "ack";
  /** The host's go: undefined until it came, then its start time (null: at once). */
  private goAt: number | null | undefined = undefined;
  private onGo: ((startAtMs: number | null) => void) | null = null;
  /** The last URL was opened and its tab started loading; `lab_loaded` was sent. */
  private lastOpened = false;
  private lastLoading = false;
  private loadedSent = false;

  constructor(
    private readonly attach: (tabId: number) => Promise<void>,
    private readonly notify: (m: ExtensionMsg) => boolean = () => false,
  ) {}

  get labTab(): number | null {
    return this.tabId;
  }

  async start(urls: readonly string[], advance: LabAdvance = "ack", startAtMs: number | null = null,
    now: () => number = Date.now, hold = false): Promise<void> {
    if (this.started || urls.length === 0) return;
    this.started = true;
    this.advance = advance;
    // once per browser session: a restarted service worker must not replay the list
    if ((await browser.storage.session.get(STARTED_KEY))[STARTED_KEY] === true) return;
    await browser.storage.session.set({ [STARTED_KEY]: true });
    const tab = await browser.tabs.create({ url: "about:blank", active: true });
    if (tab.id === undefined) throw new Error("lab: the new tab has no id");
    this.tabId = tab.id;
    browser.tabs.onUpdated.addListener((id, info) => { this.onUpdated(id, info.status); });
    await this.attach(tab.id);
    this.queue = [...urls];
    const at = hold ? (await this.held()) ?? startAtMs : startAtMs;
    const wait = at === null ? 0 : at - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else if (at !== null) console.warn(`protolens: lab start ${-wait} ms late`);
    await this.next();
  }

  /** The host's `lab_go` (it may come before the tab is attached: it is kept). */
  go(startAtMs: number | null): void {
    if (this.goAt !== undefined) return;
    this.goAt = startAtMs;
    this.onGo?.(startAtMs);
  }

  private held(): Promise<number | null> {
    if (this.goAt !== undefined) return Promise.resolve(this.goAt);
    return new Promise((resolve) => { this.onGo = resolve; });
  }

  /** The lab tab's loading state: once its last URL has loaded, say `lab_loaded` to the host. */
  onUpdated(tabId: number, status: string | undefined): void {
    if (tabId !== this.tabId || !this.lastOpened || this.loadedSent) return;
    if (status === "loading") this.lastLoading = true;
    else if (status === "complete" && this.lastLoading) {
      this.loadedSent = true;
      this.notify({ type: "lab_loaded", schema: MSG_SCHEMA });
    }
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
    if (url === undefined || this.tabId === null) return;
    this.lastOpened = this.queue.length === 0;
    await browser.tabs.update(this.tabId, { url });
  }
}
