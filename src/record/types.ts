/**
 * NavigationRecord, schema 1: the one record that crosses the extension -> host boundary.
 * Field names are the contract in docs/RECORD.md; never rename them here alone.
 */

export const RECORD_SCHEMA = 1 as const;

/** The record's value sets; tests/extension/record-schema.test.ts checks each equals the JSON Schema's
 * enum (schema/navigation-record.schema.json, generated from native-host/protolens/record/). */
export const FAMILIES = ["h1", "h2", "h3"] as const;
export const URL_DETAILS = ["origin", "path", "full"] as const;
export const SOURCES = ["passive", "lab", "experiment"] as const;
export const LATE_ATTACH = ["response", "commit", "missed"] as const;
/** A document load, a same-document navigation by the History API (a single-page app's route
 * change), a page restored from the back/forward cache, or a page shown from a prerender (its
 * activation) (docs/RECORD.md "Kinds"). */
export const PAGE_KINDS = ["navigation", "soft", "bfcache", "prerender"] as const;
/** Why a record is incomplete (docs/RECORD.md "Incomplete records"). */
export const INCOMPLETE_REASONS = [
  "aborted", "no_load_event", "load_event_missed", "unfinished_requests", "cap_after_load", "stopped", "dialog", "hidden",
] as const;
/** What DevTools could not show of a load (docs/RECORD.md "What DevTools cannot see"). */
export const NOT_SEEN = [
  "service_worker_fetches", "shared_worker_fetches", "requests_before_attach", "early_hints_preloads",
  "websocket_connections", "download_transfers",
] as const;

export type Family = (typeof FAMILIES)[number];
export type UrlDetail = (typeof URL_DETAILS)[number];
export type Source = (typeof SOURCES)[number];
export type LateAttach = (typeof LATE_ATTACH)[number];
export type PageKind = (typeof PAGE_KINDS)[number];
export type IncompleteReason = (typeof INCOMPLETE_REASONS)[number];
export type NotSeen = (typeof NOT_SEEN)[number];

export interface BrowserInfo { name: string; version: string }
export interface NetworkInfo { effective_type: string | null; rtt_ms: number | null; downlink_mbps: number | null }

export interface PageInfo {
  url: string;
  origin: string;
  url_detail: UrlDetail;
  started_at_ms: number;
  browser: BrowserInfo;
  extension_version: string;
  network: NetworkInfo | null;
  warm: boolean;
  redirects: string[];
  aborted: boolean;
  error: string | null;
  /** Null when the main document was seen from its request; otherwise how the recorder joined a
   * navigation already under way (docs/RECORD.md "Late attach"). Optional: older records lack it. */
  late_attach?: LateAttach | null;
  /** The fields below are optional: records from before them lack them. */
  kind?: PageKind;
  /** Something of the load is missing or was cut: see `incomplete_reasons`. */
  incomplete?: boolean;
  incomplete_reasons?: IncompleteReason[];
  /** Requests still open when the record ended (long-lived streams such as a WebSocket or an
   * EventSource included): their `end_ms` is null. */
  open_at_end?: number;
  /** Downloads the page started while it was recorded (they start no navigation of their own). */
  downloads?: number;
  not_seen?: NotSeen[];
}

export interface Milestones {
  ttfb_ms: number | null;
  fcp_ms: number | null;
  lcp_ms: number | null;
  dcl_ms: number | null;
  load_ms: number | null;
  first_image_ms: number | null;
  /** Visual metrics from the tab's painted frames (src/visual/metrics.ts; docs/RECORD.md "Visual
   * metrics"): null when not captured or nothing changed on screen. Optional: older records lack them. */
  first_visual_change_ms?: number | null;
  speed_index_ms?: number | null;
  visual_complete_85_ms?: number | null;
  visual_complete_99_ms?: number | null;
  last_visual_change_ms?: number | null;
}

export interface RequestEntry {
  request_id: string;
  url: string;
  host: string;
  resource_type: string;
  method: string;
  status: number | null;
  mime_type: string | null;
  protocol: string | null;
  family: Family | null;
  connection_id: number | null;
  connection_reused: boolean | null;
  remote_ip: string | null;
  remote_port: number | null;
  encoded_bytes: number;
  body_bytes: number;
  from_disk_cache: boolean;
  from_memory_cache: boolean;
  from_service_worker: boolean;
  priority: string | null;
  alternate_protocol_usage: string | null;
  start_ms: number;
  first_byte_ms: number | null;
  end_ms: number | null;
  failed: boolean;
  failure: string | null;
  frame_id: string | null;
  is_main_document: boolean;
  /** Phases of the request (CDP Response.timing, as HAR's timings; docs/RECORD.md "Timings"):
   * null where the phase did not happen (a reused connection has no dns, connect or tls).
   * `connect_ms` includes `tls_ms` (TCP + TLS, or the QUIC handshake). Optional: older records lack them. */
  dns_ms?: number | null;
  connect_ms?: number | null;
  tls_ms?: number | null;
  send_ms?: number | null;
  wait_ms?: number | null;
  receive_ms?: number | null;
}

export interface ConnectionEntry {
  connection_id: number;
  host: string;
  family: Family | null;
  remote_ip: string | null;
  remote_port: number | null;
  requests: number;
  bytes: number;
  share: number;
  first_ms: number;
  last_ms: number;
  upstream: boolean;
  /** The connection's set-up, from the request that opened it: `setup_ms` = `dns_ms` +
   * `connect_ms` (which includes `tls_ms`); null when no request showed it (opened before the
   * record, or reported by the proxy). Optional: older records lack them. */
  setup_ms?: number | null;
  dns_ms?: number | null;
  connect_ms?: number | null;
  tls_ms?: number | null;
}

export interface HostEntry { host: string; connections: number; families: Family[] }

export interface NavigationRecord {
  schema: typeof RECORD_SCHEMA;
  id: string;
  source: Source;
  page: PageInfo;
  milestones: Milestones;
  requests: RequestEntry[];
  connections: ConnectionEntry[];
  hosts: HostEntry[];
  context: Record<string, never>;
}
