/**
 * Page and Target domain handlers: which frames are the tab's children, when the navigation's
 * document commits, and its milestones (lifecycle events, load, DOMContentLoaded), all in CDP
 * monotonic time and only for the tab's own main frame.
 */
import { Navigation } from "../navigation.ts";
import type { EventOf } from "../raw-event.ts";
import type { TabState } from "../tab-state.ts";
import type { NavigationRecord } from "../../record/types.ts";

type Out = NavigationRecord[];

export function onFrameAttached(s: TabState, ev: EventOf<"Page.frameAttached">): Out {
  if (ev.params.parentFrameId) s.childFrames.add(ev.params.frameId);
  return [];
}

export function onAttachedToTarget(s: TabState, ev: EventOf<"Target.attachedToTarget">): Out {
  if (ev.params.targetInfo.type === "iframe") s.childFrames.add(ev.params.targetInfo.targetId);
  return [];
}

export function onFrameNavigated(s: TabState, ev: EventOf<"Page.frameNavigated">): Out {
  const f = ev.params.frame;
  if (f.parentId) s.childFrames.add(f.id);
  else if (ev.sessionId === undefined) {
    s.mainFrameId ??= f.id;
    if (s.nav && f.id === s.mainFrameId && f.loaderId === s.nav.loaderId) s.commit(s.nav);
  }
  return [];
}

export function onLifecycleEvent(s: TabState, ev: EventOf<"Page.lifecycleEvent">): Out {
  const p = ev.params;
  const nav = s.nav;
  if (!nav && ev.sessionId === undefined && p.name === "commit" && p.frameId === s.mainFrameId) {
    // attached after the commit: the replayed commit is all there is of its start (late.ts)
    s.begin(new Navigation(p.timestamp, NaN, p.loaderId, p.frameId, `|${p.loaderId}`, "commit"), true);
    return [];
  }
  if (!nav || ev.sessionId !== undefined || p.loaderId !== nav.loaderId || p.frameId !== s.mainFrameId) return [];
  // joined at the response and enabled after the commit: no frameNavigated, only this replay
  if (p.name === "commit" && nav.late !== null) s.commit(nav);
  // the new document's first lifecycle event is its commit: `init` (`commit` only in the
  // replay at enable, verified with Chromium 156's fixtures)
  if (p.name === "init" || p.name === "commit") s.commitAt ??= p.timestamp;
  if (p.name === "load") nav.loadAt ??= p.timestamp;
  else if (p.name === "DOMContentLoaded") nav.dclAt ??= p.timestamp;
  else if (p.name === "firstContentfulPaint") nav.fcpAt ??= p.timestamp;
  return [];
}

export function onLoadEventFired(s: TabState, ev: EventOf<"Page.loadEventFired">): Out {
  if (s.nav && s.committed && ev.sessionId === undefined) s.nav.loadAt ??= ev.params.timestamp;
  return [];
}

export function onDomContentEventFired(s: TabState, ev: EventOf<"Page.domContentEventFired">): Out {
  if (s.nav && s.committed && ev.sessionId === undefined) s.nav.dclAt ??= ev.params.timestamp;
  return [];
}
