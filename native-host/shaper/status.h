/* ProtoLens shaper: the control socket's JSON answers (status.c). */
#ifndef SH_STATUS_H
#define SH_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

typedef struct { char *buf; size_t n, cap; } sh_sbuf;

/* Append printf-style text, growing the buffer (text is dropped if memory runs out). */
void sh_sb_printf(sh_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What `stats` reports beside the model: the process, its config and the clocks' readings. */
typedef struct {
    const char *config_path;
    int pid, rt;
    uint64_t mono_ns, wall_ns;   /* CLOCK_MONOTONIC and CLOCK_REALTIME, read together */
} sh_status_ctx;

/* `stats`: counters, parameters and flows, times on the wall clock. */
void sh_stats_json(const sh_model *m, const sh_status_ctx *c, sh_sbuf *b);

/* `queue`: the queue log (bring it up to mono_ns first: sh_qlog_catchup), wall-clock times,
 * samples as [bytes, ...] and [packets, ...] per direction, oldest first. */
void sh_queue_json(const sh_model *m, uint64_t mono_ns, uint64_t wall_ns, sh_sbuf *b);

#endif
