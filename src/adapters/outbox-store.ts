/**
 * Adapter: the outbox state (src/outbox/outbox.ts) persisted in chrome.storage.local after every
 * change, changes applied one at a time, so records survive service-worker restarts until acked.
 */
import browser from "webextension-polyfill";
import { EMPTY_OUTBOX, parseOutbox, type OutboxState } from "../outbox/outbox.ts";

const KEY = "outbox";

export class OutboxStore {
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(private current: OutboxState) {}

  static async load(): Promise<OutboxStore> {
    const got = await browser.storage.local.get(KEY);
    return new OutboxStore(KEY in got ? parseOutbox(got[KEY]) : EMPTY_OUTBOX);
  }

  get state(): OutboxState {
    return this.current;
  }

  update(change: (s: OutboxState) => OutboxState): Promise<OutboxState> {
    const next = this.chain.then(async () => {
      const s = change(this.current);
      if (s !== this.current) {
        this.current = s;
        await browser.storage.local.set({ [KEY]: s });
      }
      return this.current;
    });
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** For the UI: what waits and what was dropped (read straight from storage). */
export async function outboxStatus(): Promise<{ waiting: number; droppedFull: number; droppedInvalid: number; acked: number }> {
  const got = await browser.storage.local.get(KEY);
  const s = parseOutbox(got[KEY]);
  return { waiting: s.items.length, droppedFull: s.droppedFull, droppedInvalid: s.droppedInvalid, acked: s.acked };
}
