/** Host messages are validated where they enter; garbage raises MessageError and nothing else. */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { MessageError, dispatchHost, parseHostMessage, type HostHandlers } from "../../src/messages/protocol.ts";

describe("parseHostMessage", () => {
  it("accepts the documented replies", () => {
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: null })).toMatchObject({ lab: null });
    const lab = { record: true, url_detail: "full", context: { arm: "h2" }, navigate: ["https://a.test/page/"] };
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab })).toEqual(
      { type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, advance: "ack", quiet_ms: null, visual: false, save_log: false, start_at_ms: null, hold: false } });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, start_at_ms: 1_800_000_000_123 } }))
      .toMatchObject({ lab: { start_at_ms: 1_800_000_000_123 } });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, quiet_ms: 500 } }))
      .toMatchObject({ lab: { quiet_ms: 500 } });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, advance: "record" } }))
      .toMatchObject({ lab: { advance: "record" } });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab })).toMatchObject({ lab: { visual: false } });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, visual: true } }))
      .toMatchObject({ lab: { visual: true } });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, save_log: true } }))
      .toMatchObject({ lab: { save_log: true } });
    expect(parseHostMessage({ type: "log_stored", schema: 1, msg_id: "l", navigation_id: "u", bytes: 9, duplicate: false }))
      .toEqual({ type: "log_stored", schema: 1, msg_id: "l", navigation_id: "u", duplicate: false });
    expect(parseHostMessage({ type: "ack", schema: 1, msg_id: "m", id: "u", duplicate: true })).toMatchObject({ duplicate: true });
    expect(parseHostMessage({ type: "error", schema: 1, msg_id: null, error: "x", retry: false })).toMatchObject({ retry: false });
    expect(parseHostMessage({ type: "error", schema: 1, msg_id: "m", error: "x" })).toMatchObject({ retry: true });
    expect(parseHostMessage({ type: "pong", schema: 1 })).toEqual({ type: "pong", schema: 1 });
    expect(parseHostMessage({ type: "hello", schema: 1, host_version: "0.1.0", lab: { ...lab, hold: true } }))
      .toMatchObject({ lab: { hold: true } });
    expect(parseHostMessage({ type: "lab_go", schema: 1, start_at_ms: null })).toEqual({ type: "lab_go", schema: 1, start_at_ms: null });
    expect(parseHostMessage({ type: "lab_go", schema: 1, start_at_ms: 1_800_000_000_500 })).toMatchObject({ start_at_ms: 1_800_000_000_500 });
    expect(parseHostMessage({ type: "lab_go", schema: 1 })).toMatchObject({ start_at_ms: null });
    expect(parseHostMessage({ type: "lab_loaded", schema: 1 })).toEqual({ type: "lab_loaded", schema: 1 });
  });

  it("names the first bad field", () => {
    const bad: [unknown, RegExp][] = [
      [[], /expected a JSON object/], [{ type: "hello", schema: 2 }, /schema/],
      [{ type: "nope", schema: 1 }, /unknown message type/], [{ type: "ack", schema: 1, msg_id: 3, id: "u" }, /msg_id/],
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "all" } }, /lab.url_detail/],
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", navigate: ["javascript:alert(1)"] } }, /lab.navigate/],
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: "yes", url_detail: "full" } }, /lab.record/],
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", advance: "now" } }, /lab.advance/],
      ...[-1, 1.5, "500", true, 30001, Number.NaN].map((q): [unknown, RegExp] =>
        [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", quiet_ms: q } }, /lab.quiet_ms/]),
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", visual: 1 } }, /lab.visual/],
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", save_log: "y" } }, /lab.save_log/],
      ...[-1, "1800000000000", Number.POSITIVE_INFINITY, true].map((t): [unknown, RegExp] =>
        [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", start_at_ms: t } }, /lab.start_at_ms/]),
      [{ type: "log_stored", schema: 1, msg_id: "l", navigation_id: "u" }, /duplicate/],
      [{ type: "hello", schema: 1, host_version: "1", lab: { record: true, url_detail: "full", hold: "yes" } }, /lab.hold/],
      [{ type: "lab_go", schema: 1, start_at_ms: -5 }, /start_at_ms/],
    ];
    for (const [v, re] of bad) expect(() => parseHostMessage(v)).toThrow(re);
  });

  it("property: any JSON value either parses or raises MessageError", () => {
    fc.assert(fc.property(fc.oneof(fc.jsonValue(), fc.record({ type: fc.constantFrom("hello", "ack", "error", "pong"), schema: fc.constant(1), msg_id: fc.jsonValue(), lab: fc.jsonValue(), error: fc.jsonValue() })), (v) => {
      try {
        const m = parseHostMessage(v);
        expect(["hello", "ack", "pong", "error"]).toContain(m.type);
      } catch (e) {
        expect(e).toBeInstanceOf(MessageError);
      }
    }));
  });
});

describe("dispatchHost", () => {
  it("calls exactly the handler for the type", () => {
    const handlers = { hello: vi.fn(), ack: vi.fn(), pong: vi.fn(), query_result: vi.fn(), policies: vi.fn(), error: vi.fn(), contribute_status: vi.fn(),
      log_stored: vi.fn(), lab_go: vi.fn(), lab_loaded: vi.fn() } satisfies HostHandlers;
    void dispatchHost(handlers, { type: "ack", schema: 1, msg_id: "m", id: "u", duplicate: false }, undefined);
    expect(handlers.ack).toHaveBeenCalledOnce();
    expect(handlers.hello).not.toHaveBeenCalled();
  });
});
