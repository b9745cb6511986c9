/* ProtoLens shaper: Mahimahi delivery traces on the virtual clock. A trace is a list of packet
 * delivery opportunities in ms (Mahimahi's format: one line per opportunity, repeated lines for
 * several at the same ms), looped with the last one as the period; each opportunity carries one
 * MTU, 1500 bytes (Netravali et al., "Mahimahi: Accurate Record-and-Replay for HTTP", USENIX ATC'15, LinkShell). Unused
 * opportunities are lost, as on a cellular link. Pure: times come from the caller. */
#include <stdlib.h>

#include "trace.h"

#define MS 1000000ULL

int sh_trace_append(sh_trace *t, uint64_t ms) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        uint32_t *bigger = realloc(t->ms, cap * sizeof *bigger);
        if (!bigger) return -1;
        t->ms = bigger;
        t->cap = cap;
    }
    t->ms[t->n++] = (uint32_t)ms;
    return 0;
}

const char *sh_trace_check(const sh_trace *t) {
    if (!t->n) return NULL;
    for (size_t i = 1; i < t->n; i++)
        if (t->ms[i] < t->ms[i - 1]) return "trace opportunities must not go back in time";
    if (t->ms[t->n - 1] == 0) return "a trace must last longer than 0 ms (its last opportunity is the loop period)";
    return NULL;
}

void sh_trace_free(sh_trace *t) {
    free(t->ms);
    t->ms = NULL;
    t->n = t->cap = 0;
}

void sh_trace_start(sh_trace_pos *pos, uint64_t now_ns) {
    *pos = (sh_trace_pos){.base_ns = now_ns};
}

/* Take the first unused opportunity at or after at_ns. */
static uint64_t take(const sh_trace *t, sh_trace_pos *p, uint64_t at_ns) {
    uint64_t period = (uint64_t)t->ms[t->n - 1] * MS;
    if (at_ns > p->base_ns + period) { /* idle for whole loops: skip them, do not walk them */
        p->base_ns += (at_ns - p->base_ns - 1) / period * period;
        p->idx = 0;
    }
    for (;;) {
        if (p->idx == t->n) { p->base_ns += period; p->idx = 0; }
        size_t lo = p->idx, hi = t->n; /* first index whose time is >= at_ns */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->base_ns + (uint64_t)t->ms[mid] * MS < at_ns) lo = mid + 1; else hi = mid;
        }
        p->idx = lo;
        if (lo < t->n) break;
    }
    return p->base_ns + (uint64_t)t->ms[p->idx++] * MS;
}

uint64_t sh_trace_due(const sh_trace *t, sh_trace_pos *p, uint64_t at_ns, uint32_t len) {
    if (p->cur_valid && p->cur_ns >= at_ns && p->credit >= len) {
        p->credit -= len;
        return p->cur_ns;
    }
    p->cur_ns = take(t, p, at_ns);
    p->cur_valid = 1;
    p->used++;
    p->credit = len < SH_TRACE_MTU ? SH_TRACE_MTU - len : 0;
    return p->cur_ns;
}
