/**
 * The worker core's state: what the service worker knows between events (settings, lab,
 * experiment, pause, the host link, the outbox, the tabs it records), and the two questions
 * every handler asks of it: is recording paused, and is a tab wanted. Pure.
 */
import { enrolledDomain, type ArmInEffect, type ExperimentState } from "../experiment/assign.ts";
import type { LabConfig } from "../messages/protocol.ts";
import type { OutboxState } from "../outbox/outbox.ts";
import { NO_POLICIES, type PolicySet } from "../policy/ruleset.ts";
import { effective, inScope, type Settings } from "../policy/settings.ts";
import { IDLE_APPLY, type ApplyState } from "./apply.ts";
import type { Commit } from "../cdp/missed.ts";
import type { Effect, TabInfo } from "./events.ts";
import { isPaused, type Pause } from "./pause.ts";

export interface WorkerState {
  settings: Settings;
  lab: LabConfig | null;
  experiment: ExperimentState | null;
  pause: Pause | null;
  policies: PolicySet;
  /** What the proxy settings apply to each enrolled domain, and since when. */
  inEffect: ReadonlyMap<string, ArmInEffect>;
  askedRelay: boolean;
  /** Between the host's hello and the port's close. */
  hostReady: boolean;
  outbox: OutboxState;
  /** Records sent and not yet answered. */
  inflight: ReadonlySet<string>;
  /** Tabs the debugger is attached to (or attaching). */
  attached: ReadonlySet<number>;
  /** Tabs whose attach is under way, with the commit seen meanwhile (null: none yet). An attach
   * started at onBeforeNavigate may end after the commit: it fails (the tab still showed
   * chrome://newtab) and is retried as a commit attach, or it succeeds and joins the commit. */
  attaching: ReadonlyMap<number, TabInfo | null>;
  /** Tabs whose attach is under way -> the top-frame commits seen since it began (the commit it
   * was made for first, for an attach at the commit): handed to the session once attached. */
  commits: ReadonlyMap<number, readonly Commit[]>;
  /** Each tab's latest top-level navigation start (webNavigation.onBeforeNavigate): a commit of
   * the same URL takes its time as its start. */
  starts: ReadonlyMap<number, { url: string; at: number }>;
  /** Each tab's documents committed in a prerendering frame (the latest few): a top-level commit
   * of one of them activates it. */
  prerendered: ReadonlyMap<number, readonly string[]>;
  /** Tabs let go once idle after a record: attached again at their next navigation. */
  idle: ReadonlySet<number>;
  /** Tabs held attached after their record (`Settings.holdS`) -> the token of the `let_go` timer
   * that lets them go; a navigation in the tab meanwhile drops the entry, and its own record sets
   * a new one. */
  held: ReadonlyMap<number, number>;
  /** The last hold token given out. */
  holdSeq: number;
  /** Each tab's top-level URL as last committed or changed by the History API: a History API
   * call that keeps it is no route change (on-tabs.ts onHistoryState). */
  shown: ReadonlyMap<number, string>;
  labTab: number | null;
  labStart: "none" | "waiting" | "started";
  apply: ApplyState;
  /** The first-run page: to open once we know this is not a lab profile. */
  welcome: "none" | "pending" | "done";
}

export function initialState(settings: Settings, experiment: ExperimentState | null, pause: Pause | null, outbox: OutboxState): WorkerState {
  return {
    settings, lab: null, experiment, pause, policies: NO_POLICIES, inEffect: new Map(), askedRelay: false,
    hostReady: false, outbox, inflight: new Set(), attached: new Set(), attaching: new Map(), commits: new Map(), starts: new Map(), prerendered: new Map(), idle: new Set(), held: new Map(), holdSeq: 0, shown: new Map(),
    labTab: null, labStart: "none", apply: IDLE_APPLY, welcome: "none",
  };
}

export interface Step { state: WorkerState; effects: Effect[] }

export const without = <T>(s: ReadonlySet<T>, x: T): Set<T> => { const n = new Set(s); n.delete(x); return n; };
export const plus = <T>(s: ReadonlySet<T>, x: T): Set<T> => new Set(s).add(x);
export const unset = <K, V>(m: ReadonlyMap<K, V>, k: K): Map<K, V> => { const n = new Map(m); n.delete(k); return n; };

/** Recording off for the user's browsing (a lab profile is the host's to switch). */
export function paused(s: WorkerState, now: number): boolean {
  return s.lab === null && isPaused(s.pause, now);
}

/** Should the debugger be attached to a tab showing `url`? */
export function wanted(s: WorkerState, url: string, incognito: boolean, now: number): boolean {
  if (paused(s, now)) return false;
  if (inScope(effective(s.settings, s.lab), url, incognito)) return true;
  if (s.lab !== null || incognito || s.experiment === null) return false;
  try {
    const u = new URL(url);
    return (u.protocol === "https:" || u.protocol === "http:") && enrolledDomain(s.experiment, u.hostname) !== null;
  } catch {
    return false;
  }
}
