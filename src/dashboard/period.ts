/**
 * The dashboard's period choice: which navigations (by start time) the charts cover. Pure, so
 * the mapping from the select's value to the host's `since_ms` is unit-tested.
 */
const DAY_MS = 86_400_000;

export const PERIODS = {
  all: { label: "all time", ms: null },
  day: { label: "last 24 hours", ms: DAY_MS },
  week: { label: "last 7 days", ms: 7 * DAY_MS },
  month: { label: "last 30 days", ms: 30 * DAY_MS },
} as const;

export type Period = keyof typeof PERIODS;

/** An unknown value (a stale or edited select) means all time: the widest, never an error. */
export function periodOf(value: string): Period {
  return Object.hasOwn(PERIODS, value) ? (value as Period) : "all";
}

/** The host's `since_ms` for `period` at epoch ms `now`: null for all time. */
export function sinceMs(period: Period, now: number): number | null {
  const span = PERIODS[period].ms;
  return span === null ? null : now - span;
}
