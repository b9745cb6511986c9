/**
 * Adapter: the log tap's sender. Each tapped log (src/replay/log-tap.ts) is gzipped here with
 * CompressionStream("gzip") and sent to the host as a `log` message (docs/MESSAGES.md) once the
 * host has acknowledged its record: the host keeps a log only beside a stored record. Best
 * effort, outside the durable outbox: logs wait in memory, at most MAX_PENDING of them and
 * MAX_PENDING_BYTES in all (the oldest go first), and a worker restart loses the waiting ones.
 */
import type { ExtensionMsg } from "../messages/protocol.ts";
import { logText, type TappedLog } from "../replay/log-tap.ts";
import type { ReplayOptions } from "../replay/replay.ts";

/** Logs waiting for their record's ack (a lab load's records are acked within a second). */
const MAX_PENDING = 32;
/** Gzipped bytes waiting in all; one log may be at most the host's 48 MiB. */
const MAX_PENDING_BYTES = 48 << 20;

interface Pending { data: string; bytes: number; options: ReplayOptions }

async function gzipBase64(text: string): Promise<{ data: string; bytes: number }> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  const gz = new Uint8Array(await new Response(stream).arrayBuffer());
  let bin = "";
  for (let i = 0; i < gz.length; i += 0x8000) bin += String.fromCharCode(...gz.subarray(i, i + 0x8000));
  return { data: btoa(bin), bytes: gz.length };
}

export class LogSender {
  private readonly pending = new Map<string, Pending>();
  private readonly acked = new Set<string>();

  constructor(private readonly send: (m: ExtensionMsg) => boolean) {}

  /** A tapped log with the options its recorder had (the record's id among them). */
  async add(log: TappedLog, options: ReplayOptions): Promise<void> {
    const id = log.record.id;
    const { data, bytes } = await gzipBase64(logText(log.events));
    if (bytes > MAX_PENDING_BYTES) return;
    this.pending.set(id, { data, bytes, options: { ...options, id } });
    let total = [...this.pending.values()].reduce((s, p) => s + p.bytes, 0);
    for (const [old, p] of this.pending) {
      if (this.pending.size <= MAX_PENDING && total <= MAX_PENDING_BYTES) break;
      this.pending.delete(old);
      total -= p.bytes;
    }
    if (this.acked.delete(id)) this.flush(id);
  }

  /** The host stored record `id`: its log can follow. */
  onAck(id: string): void {
    if (this.pending.has(id)) {
      this.flush(id);
      return;
    }
    // its log may still be being gzipped (or the tap is off): remembered, the oldest forgotten
    this.acked.add(id);
    for (const old of this.acked) {
      if (this.acked.size <= MAX_PENDING) break;
      this.acked.delete(old);
    }
  }

  private flush(id: string): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    this.send({ type: "log", schema: 1, msg_id: `log-${id}`, navigation_id: id, data: p.data, options: p.options });
  }
}
