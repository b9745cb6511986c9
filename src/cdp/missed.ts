/**
 * Navigations the recorder never saw (docs/RECORD.md "Late attach", `missed`). Everyday recording
 * attaches the debugger at each navigation of a tab let go idle, and a document can commit and be
 * left (a redirect by script) while that attach is under way: none of its events reach the
 * recorder, or only some, too late to place it, and it had no record at all (about one run in
 * three of the real-web redirect page, tests/e2e/test_realweb_everyday_e2e.py).
 *
 * The worker core hands the session the top-frame commits webNavigation reports for the tab
 * (those seen while the attach was under way, once it is attached; a back/forward one never: a
 * restore's record is of its own kind; src/worker/on-tabs.ts). Commits and records are matched by
 * the page's unreduced URL (fragment left out), not by time: webNavigation's `timeStamp` and the
 * DevTools clocks disagree by tens of milliseconds, and a page redirected by script starts before
 * the browser process reports the commit of the page that redirected it (measured: 1.6 ms before,
 * the landing page's commit reported 38 ms after its own commit event). A navigation record takes
 * the first waiting commit of its URL as its own; the waiting commits reported before that one are
 * missed, and so is every commit still waiting when the session ends. A missed commit gets a
 * record of its own, handed out before the record that showed it missed: its URL, its start
 * (webNavigation's onBeforeNavigate for that URL, else the commit's time), no request, no milestone, `late_attach` "missed", incomplete ("aborted": left
 * before the recorder saw its load event) and `requests_before_attach` not seen.
 *
 * A commit that activates a prerender (the document webNavigation reported committed in a
 * prerendering frame earlier, src/worker/on-tabs.ts) is not a page left unseen: the page was
 * loaded during the prerender, while no debugger was attached, and is shown now. Its record is of
 * its own kind, `prerender` (docs/RECORD.md "Kinds"): started at the activation, complete, not
 * aborted, no request and no milestone, `requests_before_attach` not seen (the prerender's). Pure.
 */
import { buildRecord } from "./build-record.ts";
import { Navigation } from "./navigation.ts";
import type { RecorderOptions } from "./tab-state.ts";
import type { NavigationRecord } from "../record/types.ts";

/** A top-level commit webNavigation reported: its URL and time (epoch ms, `timeStamp`), and when
 * its navigation started (onBeforeNavigate's `timeStamp` for the same URL; absent after a
 * redirect, when the commit's time stands for it). */
export interface Commit {
  url: string; at: number; startedAt?: number;
  /** The commit activated a prerendered document (its webNavigation `documentId` was first
   * committed in a prerendering frame). */
  activation?: boolean;
}

/** Records kept waiting for their commit's report (a commit out of scope or back/forward is
 * never reported): the recent ones are enough, as commits are reported within milliseconds. */
const MAX_UNMATCHED = 16;

const bare = (url: string): string => url.split("#", 1)[0] ?? "";

export class MissedCommits {
  /** Commits reported and not matched yet, in the order reported. */
  private pending: Commit[] = [];
  /** Unreduced URLs of the navigation records handed out whose commit was not reported yet. */
  private unmatched: string[] = [];

  /** `fullUrl`: a record's unreduced URL, by its id (src/cdp/recorder.ts). */
  constructor(private readonly o: Pick<RecorderOptions, "source" | "urlDetail" | "env" | "newId">,
    private readonly fullUrl: (id: string) => string | undefined) {}

  /** Commits reported (those seen while the attach was under way, or one since): one whose record
   * was handed out already is matched to it; the others wait for theirs. */
  expect(commits: readonly Commit[]): void {
    for (const c of commits) {
      const i = this.unmatched.indexOf(bare(c.url));
      if (i >= 0) this.unmatched.splice(i, 1);
      else this.pending.push(c);
    }
  }

  /** The session's records in order, each missed commit's record placed before the record that
   * showed it missed. */
  pass(records: readonly NavigationRecord[]): NavigationRecord[] {
    if (records.length === 0) return [];
    const out: NavigationRecord[] = [];
    for (const r of records) {
      if (r.page.kind === undefined || r.page.kind === "navigation") {
        const url = bare(this.fullUrl(r.id) ?? "");
        const own = this.pending.findIndex((c) => bare(c.url) === url);
        if (own >= 0) {
          out.push(...this.pending.slice(0, own).map((c) => this.record(c)));
          this.pending = this.pending.slice(own + 1);
        } else if (url !== "") {
          this.unmatched = [...this.unmatched, url].slice(-MAX_UNMATCHED);
        }
      }
      out.push(r);
    }
    return out;
  }

  /** The session ended: every commit still waiting was missed. */
  close(): NavigationRecord[] {
    const left = this.pending.map((c) => this.record(c));
    this.pending = [];
    return left;
  }

  private record(c: Commit): NavigationRecord {
    const start = (c.startedAt ?? c.at) / 1000;
    if (c.activation === true) {
      return buildRecord(new Navigation(0, start, "", "", "", null, "prerender", c.url), {
        id: this.o.newId(), source: this.o.source, urlDetail: this.o.urlDetail, env: this.o.env, aborted: false,
        notSeen: ["requests_before_attach"],
      });
    }
    const nav = new Navigation(0, start, "", "", "", "missed", "navigation", c.url);
    return buildRecord(nav, {
      id: this.o.newId(), source: this.o.source, urlDetail: this.o.urlDetail, env: this.o.env, aborted: true,
      reasons: ["aborted"], notSeen: ["requests_before_attach"],
    });
  }
}
