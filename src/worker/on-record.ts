/**
 * Worker core handlers for the recorder's output and the settings around it: a record is
 * annotated with the policies and arm in effect, queued in the outbox and sent; a tab idle
 * after its record is let go; settings, experiment and pause changes; the lab's start. Pure.
 */
import { advance } from "../experiment/assign.ts";
import { annotate } from "../policy/applied.ts";
import { effective, inScope } from "../policy/settings.ts";
import { enqueue } from "../outbox/outbox.ts";
import type { WorkerEvent } from "./events.ts";
import type { Out } from "./out.ts";
import { paused } from "./state.ts";

type Ev<T extends WorkerEvent["type"]> = Extract<WorkerEvent, { type: T }>;

export function onRecord(o: Out, ev: Ev<"record">): void {
  const s = o.s;
  const { record, enrolled } = annotate(ev.record, s.policies, s.experiment, s.lab !== null, ev.applied, ev.installed, s.inEffect);
  // a tab idle after its record is let go, at once or after its hold (Settings.holdS): the
  // "started debugging" infobar goes with the last session; a navigation after that attaches
  // again and joins late (src/cdp/late.ts), one within the hold is read from its first request
  const letGo = s.lab === null && !ev.busy && s.attached.has(ev.tabId) && ev.tabId !== s.labTab;
  const keep = !paused(s, o.now) &&
    // attached only for the experiment (recording off) but not an experiment load: not recorded
    (record.source === "experiment" || inScope(effective(s.settings, s.lab), ev.record.page.origin, false));
  if (keep) {
    if (enrolled !== null && s.experiment !== null) {
      // the next navigation to this domain gets the next arm of its block (experiment/assign.ts)
      o.s = { ...o.s, experiment: advance(s.experiment, enrolled) };
      o.emit({ type: "save_experiment", experiment: o.s.experiment });
    }
    o.emit({ type: "lab_record", tabId: ev.tabId, record });
    o.s = { ...o.s, outbox: enqueue(o.s.outbox, record) };
    o.emit({ type: "save_outbox", outbox: o.s.outbox });
    o.flush();
    o.emit({ type: "lab_queued", record }, { type: "show_record", tabId: ev.tabId, record });
  }
  if (letGo) hold(o, ev.tabId);
}

/** Lets go of a tab idle after its record: now, or once its hold runs out (`let_go`). */
function hold(o: Out, tabId: number): void {
  const ms = o.s.settings.holdS * 1000;
  if (ms <= 0) {
    o.detach(tabId, true);
    return;
  }
  const token = o.s.holdSeq + 1;
  o.s = { ...o.s, holdSeq: token, held: new Map(o.s.held).set(tabId, token) };
  o.emit({ type: "timer", ms, event: { type: "let_go", tabId, token } });
}

/** A tab's hold ran out: let it go if no navigation began in it since its record (that one's own
 * record holds it again) and it is still attached and not the lab's. */
export function onLetGo(o: Out, ev: Ev<"let_go">): void {
  if (o.s.held.get(ev.tabId) !== ev.token) return;
  o.unhold(ev.tabId);
  if (o.s.lab === null && o.s.attached.has(ev.tabId) && ev.tabId !== o.s.labTab) o.detach(ev.tabId, true);
}

export function onStart(o: Out): void {
  o.pauseChanged();
}

export function onSettings(o: Out, ev: Ev<"settings">): void {
  o.s = { ...o.s, settings: ev.settings };
  o.emit({ type: "query_tabs" });
}

export function onExperiment(o: Out, ev: Ev<"experiment">): void {
  o.s = { ...o.s, experiment: ev.experiment };
  o.requestApply({ sync: true, lab: false });
}

export function onPause(o: Out, ev: Ev<"pause">): void {
  o.s = { ...o.s, pause: ev.pause };
  o.pauseChanged();
}

export function onInstalled(o: Out): void {
  o.s = { ...o.s, welcome: "pending" };
  if (o.s.hostReady) o.openWelcomeOnce(o.s.lab !== null);
}

export function onProxyApplied(o: Out, ev: Ev<"proxy_applied">): void {
  o.applied(ev.pac);
}

export function onLabTimeout(o: Out): void {
  o.startLab();
}
