/** The outbox core: bounded, drops counted, records leave only on ack or an invalid verdict. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EMPTY_OUTBOX, ack, backoffMs, enqueue, parseOutbox, reject, type OutboxState } from "../../src/outbox/outbox.ts";
import { golden } from "../../scripts/fixture-io.ts";
import type { NavigationRecord } from "../../src/record/types.ts";

const base = golden("h2")[0] as NavigationRecord;
const rec = (id: string): NavigationRecord => ({ ...base, id });

describe("outbox", () => {
  it("keeps records until acked, once per id", () => {
    let s = enqueue(enqueue(EMPTY_OUTBOX, rec("a")), rec("a"));
    s = enqueue(s, rec("b"));
    expect(s.items.map((i) => i.msgId)).toEqual(["a", "b"]);
    s = ack(s, "a");
    expect(s.items.map((i) => i.msgId)).toEqual(["b"]);
    expect(ack(s, "nope")).toBe(s);
    expect(s.acked).toBe(1);
  });

  it("drops the oldest past the bound and counts them", () => {
    let s: OutboxState = EMPTY_OUTBOX;
    for (const id of ["a", "b", "c", "d"]) s = enqueue(s, rec(id), { maxItems: 2, maxBytes: 1e9 });
    expect(s.items.map((i) => i.msgId)).toEqual(["c", "d"]);
    expect(s.droppedFull).toBe(2);
    const tiny = enqueue(EMPTY_OUTBOX, rec("x"), { maxItems: 10, maxBytes: 10 });
    expect(tiny).toMatchObject({ items: [], droppedFull: 1 });
  });

  it("an error with retry keeps the record; without, drops and counts it", () => {
    const s = enqueue(EMPTY_OUTBOX, rec("a"));
    const kept = reject(s, "a", true);
    expect(kept.items[0]?.attempts).toBe(1);
    const gone = reject(s, "a", false);
    expect(gone).toMatchObject({ items: [], droppedInvalid: 1 });
  });

  it("survives a round trip through storage JSON; garbage reads as empty", () => {
    const s = enqueue(enqueue(EMPTY_OUTBOX, rec("a")), rec("b"));
    expect(parseOutbox(JSON.parse(JSON.stringify(s)))).toEqual(s);
    expect(parseOutbox("junk")).toEqual(EMPTY_OUTBOX);
    expect(parseOutbox({ items: [{ bad: 1 }], droppedFull: -3 })).toMatchObject({ items: [], droppedFull: 1 });
  });

  it("property: bounded, unique, and every record accounted for", () => {
    const op = fc.oneof(
      fc.record({ k: fc.constant("add" as const), id: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ k: fc.constant("ack" as const), id: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ k: fc.constant("err" as const), id: fc.integer({ min: 0, max: 30 }), retry: fc.boolean() }),
    );
    fc.assert(fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
      let s = EMPTY_OUTBOX;
      const added = new Set<string>();
      for (const o of ops) {
        const id = `r${o.id}`;
        if (o.k === "add") {
          if (!s.items.some((i) => i.msgId === id)) added.add(`${id}#${added.size}`);
          s = enqueue(s, rec(id), { maxItems: 5, maxBytes: 1e9 });
        } else if (o.k === "ack") s = ack(s, id);
        else s = reject(s, id, o.retry);
      }
      expect(s.items.length).toBeLessThanOrEqual(5);
      expect(new Set(s.items.map((i) => i.msgId)).size).toBe(s.items.length);
      expect(s.items.length + s.acked + s.droppedFull + s.droppedInvalid).toBe(added.size);
    }));
  });

  it("backoff doubles from 1 s and stops at 60 s", () => {
    expect([0, 1, 2, 5, 6, 30].map(backoffMs)).toEqual([1000, 2000, 4000, 10000, 10000, 10000]);
  });
});
