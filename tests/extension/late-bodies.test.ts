/** A navigation joined late whose page was answered by its service worker (src/cdp/tab-state.ts:
 * every record joined under way declares requests_before_attach). The log is real: the extension's log tap in the everyday
 * real-web e2e (tests/e2e/test_realweb_everyday_e2e.py, Chromium 156), the second load of a page
 * its worker controls. The debugger's attach completed after the page had requested its script
 * and two images: the script's response came after it, the images only as dataReceived and
 * loadingFinished (requests 25227.13 and .14). They cannot be recorded (no URL); the record said
 * nothing of them until it declared requests_before_attach. */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RawEvent } from "../../src/cdp/raw-event.ts";
import { TabSession, type Flow } from "../../src/cdp/session.ts";
import type { NavigationRecord } from "../../src/record/types.ts";
import { golden } from "../../scripts/fixture-io.ts";

const LOG = join(import.meta.dirname, "../fixtures/late/sw-controlled-joined-late.jsonl");

function replay(events: RawEvent[]): NavigationRecord[] {
  const s = new TabSession({
    source: "passive", urlDetail: "full", newId: () => "id", mainFrameId: "3618CFE8D0319BABADF98E89E3BCA318",
    env: { browser: { name: "Chromium", version: "156" }, extension_version: "0", network: null },
  });
  const records: NavigationRecord[] = [];
  const drive = (flow: Flow): void => {
    let step = flow.next();
    while (step.done !== true) {
      if (step.value.kind === "records") records.push(...step.value.records);
      step = flow.next(step.value.kind === "send" ? { ok: false, error: "logged" } : undefined);
    }
  };
  for (const ev of events) drive(s.onEvent(ev));
  records.push(...s.close());
  return records;
}

const events = (): RawEvent[] => readFileSync(LOG, "utf8").split("\n").filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as RawEvent);
const unseenBodies = (ev: RawEvent): boolean =>
  (ev.method === "Network.dataReceived" || ev.method === "Network.loadingFinished") &&
  ["25227.13", "25227.14"].includes(ev.params.requestId);

describe("a late join's requests known only by their bodies", () => {
  it("are declared unseen: requests_before_attach", () => {
    const [rec] = replay(events());
    expect(rec?.page.late_attach).toBe("response");
    expect(rec?.requests.map((r) => r.url.split("/").pop())).toEqual(["", "page.js"]);
    expect(rec?.page.not_seen).toContain("requests_before_attach");
    expect(rec?.page.not_seen).toContain("service_worker_fetches");
  });

  it("its document, answered by the worker, has no byte on the wire however its end was read", () => {
    const [rec] = replay(events());
    // its loadingFinished came before the attach: end and bytes from Navigation Timing (workerStart
    // 9.8, nextHopProtocol ""), as a fully seen worker-answered document's loadingFinished says 0
    expect(rec?.requests[0]).toMatchObject({ is_main_document: true, from_service_worker: true, encoded_bytes: 0,
      body_bytes: 257, connection_id: null });
  });

  it("and without them too (the same log less those two requests' events): a request can go unseen with no event at all", () => {
    const [rec] = replay(events().filter((ev) => !unseenBodies(ev)));
    expect(rec?.page.late_attach).toBe("response");
    expect(rec?.page.not_seen).toContain("requests_before_attach");
  });

  it("a load seen from its first request declares nothing of the kind", () => {
    for (const name of ["h1", "h2", "h3", "redirect"]) {
      for (const r of golden(name)) expect(r.page.not_seen ?? []).not.toContain("requests_before_attach");
    }
  });
});
