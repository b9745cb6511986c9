/**
 * The log tap's sender (src/adapters/log-sender.ts) with the runtime's own CompressionStream: a
 * log goes out only after its record's ack, whichever comes first, gzipped as the host reads it.
 */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { golden, readLog } from "../../scripts/fixture-io.ts";
import { LogSender } from "../../src/adapters/log-sender.ts";
import type { ExtensionMsg } from "../../src/messages/protocol.ts";
import { parseLog } from "../../src/replay/log-file.ts";

const record = golden("h2")[0];
const events = readLog("h2");
const options = { source: "lab" as const, url_detail: "full" as const };

describe("log sender", () => {
  it("sends after the ack, the events gzipped as JSON lines, with the options and the record's id", async () => {
    if (record === undefined) throw new Error("no golden");
    const sent: ExtensionMsg[] = [];
    const s = new LogSender((m) => sent.push(m) > 0);
    await s.add({ record, events }, options);
    expect(sent).toEqual([]);
    s.onAck("another record");
    expect(sent).toEqual([]);
    s.onAck(record.id);
    expect(sent).toHaveLength(1);
    const m = sent[0];
    if (m?.type !== "log") throw new Error("not a log message");
    expect(m).toMatchObject({ navigation_id: record.id, msg_id: `log-${record.id}`, options: { ...options, id: record.id } });
    expect(parseLog(gunzipSync(Buffer.from(m.data, "base64")).toString("utf8"))).toEqual(events);
    s.onAck(record.id);
    expect(sent).toHaveLength(1); // once
  });

  it("an ack that came while the log was gzipped sends it as soon as it is ready", async () => {
    if (record === undefined) throw new Error("no golden");
    const sent: ExtensionMsg[] = [];
    const s = new LogSender((m) => sent.push(m) > 0);
    const adding = s.add({ record, events }, options);
    s.onAck(record.id);
    await adding;
    expect(sent.map((m) => m.type)).toEqual(["log"]);
  });

  it("keeps at most 32 logs waiting, the oldest going first", async () => {
    if (record === undefined) throw new Error("no golden");
    const sent: ExtensionMsg[] = [];
    const s = new LogSender((m) => sent.push(m) > 0);
    for (let i = 0; i < 33; i++) await s.add({ record: { ...record, id: `r${i}` }, events: events.slice(0, 3) }, options);
    s.onAck("r0");
    s.onAck("r1");
    expect(sent.map((m) => (m.type === "log" ? m.navigation_id : ""))).toEqual(["r1"]);
  });
});
