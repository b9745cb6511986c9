/* ProtoLens shaper: Mahimahi delivery traces on the virtual clock (trace.c), below the link
 * model (model.h), which serves a direction's bottleneck queue at a trace's opportunities. */
#ifndef PL_TRACE_H
#define PL_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* A Mahimahi packet-delivery trace for one direction (trace.c): the bottleneck queue is served
 * only at these opportunities, looped, instead of at rate_bps. */
#define SH_TRACE_MTU 1500    /* bytes one delivery opportunity carries */
typedef struct {
    uint32_t *ms;             /* opportunities, ms from the trace start, nondecreasing; n = 0: off */
    size_t n, cap;
} sh_trace;

/* Where a direction stands in its trace. */
typedef struct {
    uint64_t base_ns;         /* start of the current loop */
    size_t idx;               /* next unused opportunity in this loop */
    uint64_t cur_ns;          /* the opportunity last taken, and the bytes it can still carry */
    uint32_t credit;
    int cur_valid;
    uint64_t used;            /* opportunities taken since the trace started */
} sh_trace_pos;

/* Delivery traces (trace.c). Append one opportunity (ms); 0 or -1 when out of memory. */
int sh_trace_append(sh_trace *t, uint64_t ms);
/* NULL if the trace can be played, else why not (one line). */
const char *sh_trace_check(const sh_trace *t);
void sh_trace_free(sh_trace *t);
void sh_trace_start(sh_trace_pos *pos, uint64_t now_ns);
/* When a packet of len bytes, at the head of the queue from at_ns, leaves: the first
 * opportunity at or after at_ns with room for it (an opportunity carries SH_TRACE_MTU bytes; a
 * packet that does not fit in what is left waits for the next one). Consumes that room. */
uint64_t sh_trace_due(const sh_trace *t, sh_trace_pos *pos, uint64_t at_ns, uint32_t len);

#endif
