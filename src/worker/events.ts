/**
 * What the service worker's adapter tells the worker core (WorkerEvent) and what the core asks
 * it to do (Effect). Plain data, so a unit test can drive the core with a list of events and read
 * its decisions (tests/extension/worker-core.test.ts). The adapter (src/adapters/service-worker.ts)
 * turns chrome.* events into WorkerEvents and runs Effects, feeding results back as events.
 */
import type { Commit } from "../cdp/missed.ts";
import type { ExperimentState } from "../experiment/assign.ts";
import type { ExtensionMsg, HostMsg, LabAdvance, LabConfig } from "../messages/protocol.ts";
import type { OutboxState } from "../outbox/outbox.ts";
import type { PolicyRecord } from "../policy/applied.ts";
import type { Throttling, PolicyRule, RelayInfo } from "../policy/ruleset.ts";
import type { Settings } from "../policy/settings.ts";
import type { NavigationRecord, Source, UrlDetail } from "../record/types.ts";
import type { Pause } from "./pause.ts";

export interface TabInfo { tabId: number; url: string; incognito: boolean }

export type WorkerEvent =
  /** The worker started with the state its adapter loaded (src/worker/core.ts initialState). */
  | { type: "start" }
  | { type: "settings"; settings: Settings }
  | { type: "experiment"; experiment: ExperimentState | null }
  | { type: "pause"; pause: Pause | null }
  | { type: "installed" }
  | { type: "host"; msg: HostMsg }
  | { type: "host_down" }
  | { type: "send_failed"; msgId: string }
  | { type: "retry"; msgId: string }
  /** Every open tab (at start-up and whenever the scope may have changed). */
  | { type: "tabs"; tabs: TabInfo[] }
  /** A top-level navigation is about to start (webNavigation.onBeforeNavigate, frame 0). */
  | { type: "before_navigate"; tab: TabInfo; at?: number }
  /** A new tab opened on `tab.url` (tabs.onCreated, its pendingUrl). */
  | { type: "created"; tab: TabInfo }
  /** A top-level navigation committed (webNavigation.onCommitted, frame 0); `at`: its
   * `timeStamp`, epoch ms; `backForward`: its `transitionQualifiers` hold "forward_back";
   * `documentId`: the committed document's. */
  | { type: "committed"; tab: TabInfo; at: number; backForward: boolean; documentId?: string }
  /** A document committed in a tab's prerendering frame (webNavigation.onCommitted with
   * `documentLifecycle` "prerender", an outermost frame other than 0): a later top-level commit
   * of the same `documentId` is its activation (src/cdp/missed.ts). */
  | { type: "prerendered"; tabId: number; documentId: string }
  /** The top frame changed its URL by the History API (webNavigation.onHistoryStateUpdated,
   * frame 0): a single-page app's route change. */
  | { type: "history_state"; tab: TabInfo }
  | { type: "attach_failed"; tabId: number }
  /** An `attach` effect succeeded: the tab is being recorded. */
  | { type: "attached"; tabId: number }
  /** The browser ended the debugging session (tab closed, the user cancelled the infobar). */
  | { type: "detached"; tabId: number }
  | { type: "removed"; tabId: number }
  /**
   * A record from the recorder. `applied`: CDP requestId -> throttling rule id, `installed`: the
   * rule patterns Chromium accepted (src/adapters/throttle.ts); `busy`: the tab's recorder is
   * already recording a next navigation (so the tab is not idle).
   */
  | {
    type: "record"; tabId: number; record: NavigationRecord; applied: ReadonlyMap<string, string>;
    installed: ReadonlySet<string>; busy: boolean;
  }
  /** The proxy settings of an `apply_proxy` effect were set (`pac` true/false) or failed (null). */
  | { type: "proxy_applied"; pac: boolean | null }
  /** The lab runner opened its tab: attach to it and keep it attached. */
  | { type: "lab_tab"; tabId: number }
  | { type: "lab_timeout" }
  /** A timer set by a `timer` effect for the pause ran out. */
  | { type: "tick" }
  /** A tab's hold after its record ran out (`token`: the hold's, src/worker/on-record.ts). */
  | { type: "let_go"; tabId: number; token: number };

export type Effect =
  /** `quietMs`: the recorder's network quiet after load (null: its default); `saveLog`: the log
   * tap; `soft`: the attach is for a same-document navigation to this URL, already made (the tab
   * was let go idle): the recorder starts it at the first request it sees (src/cdp/recorder.ts). */
  | {
    type: "attach"; tabId: number; committed: boolean; source: Source; urlDetail: UrlDetail; quietMs: number | null;
    visual: boolean; saveLog: boolean; soft: string | null;
  }
  | { type: "detach"; tabId: number }
  /** The attach ended after the tab's commit: join that load if it is already over
   * (src/cdp/session.ts afterAttach(true)). */
  | { type: "join_commit"; tabId: number }
  /** Top-frame commits of an attached tab (those seen while its attach was under way, in order,
   * once attached): the session gives those its recorder never saw records of their own
   * (src/cdp/missed.ts). */
  | { type: "expect_commits"; tabId: number; commits: Commit[] }
  /** Query every tab and answer with a `tabs` event. */
  | { type: "query_tabs" }
  | { type: "send"; msg: ExtensionMsg }
  | { type: "save_outbox"; outbox: OutboxState }
  | { type: "save_experiment"; experiment: ExperimentState | null }
  | { type: "save_pause"; pause: Pause | null }
  /** What the popup shows about the host (chrome.storage.session). */
  | { type: "save_host"; lab: LabConfig | null; hostVersion: string }
  | { type: "apply_proxy"; rules: PolicyRule[]; relay: RelayInfo | null }
  | { type: "throttle"; throttling: Throttling; tabs: number[] }
  | { type: "show_record"; tabId: number; record: PolicyRecord }
  /** The icon's badge: paused (with the pause's end, null = until turned on) or not. */
  | { type: "badge"; paused: boolean; until: number | null }
  | { type: "timer"; ms: number; event: WorkerEvent }
  | { type: "open_welcome" }
  | { type: "lab_start"; navigate: string[]; advance: LabAdvance; startAtMs: number | null; hold: boolean }
  /** The host's go for a standby lab browser (`lab.hold`). */
  | { type: "lab_go"; startAtMs: number | null }
  | { type: "lab_record"; tabId: number; record: PolicyRecord }
  | { type: "lab_queued"; record: PolicyRecord }
  | { type: "lab_ack"; id: string };
