/* ProtoLens shaper: the control socket's answers as JSON (stats, queue), built from the model's
 * counters. Pure: the clocks' readings come from the caller (main.c). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void sh_sb_printf(sh_sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int need = vsnprintf(b->buf + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (need >= 0 && (size_t)need < b->cap - b->n) { b->n += (size_t)need; return; }
        size_t cap = b->cap * 2 + (size_t)need + 64;
        char *nb = realloc(b->buf, cap);
        if (!nb) return;
        b->buf = nb;
        b->cap = cap;
    }
}

static void ip_str(uint32_t ip, char out[16]) {
    snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* "traces": per direction, the delivery trace in use (trace.c), or null. */
static void traces_json(const sh_model *m, sh_sbuf *b) {
    sh_sb_printf(b, ",\"traces\":{");
    for (int dir = 0; dir < SH_DIRS; dir++) {
        const sh_trace *t = &m->sched.trace[dir];
        sh_sb_printf(b, "%s\"%s\":", dir ? "," : "", dir == SH_UP ? "up" : "down");
        if (!t->n) { sh_sb_printf(b, "null"); continue; }
        sh_sb_printf(b, "{\"opportunities\":%zu,\"period_ms\":%u,\"used\":%llu}", t->n,
                  t->ms[t->n - 1], (unsigned long long)m->d[dir].trace_pos.used);
    }
    sh_sb_printf(b, "}");
}

void sh_stats_json(const sh_model *m, const sh_status_ctx *c, sh_sbuf *b) {
    uint64_t mono = c->mono_ns, wall = c->wall_ns;
    int64_t off = (int64_t)(wall - mono);
    const sh_lateness *l = &m->lat;
    sh_sb_printf(b, "{\"name\":\"%s\",\"config\":\"%s\",\"pid\":%d,\"rt\":%s,\"now_ns\":%llu,\"wall_ns\":%llu,"
              "\"schedule_started_ns\":%llu,\"lateness\":{\"count\":%llu,\"max_ns\":%llu,\"p50_ns\":%llu,"
              "\"p99_ns\":%llu,\"over_20ms\":%llu},\"dirs\":{",
              m->sched.name, c->config_path, c->pid, c->rt ? "true" : "false",
              (unsigned long long)mono, (unsigned long long)wall,
              (unsigned long long)(m->sched_start_ns + (uint64_t)off),
              (unsigned long long)l->count, (unsigned long long)l->max_ns,
              (unsigned long long)sh_lat_quantile(l, 0.5), (unsigned long long)sh_lat_quantile(l, 0.99),
              (unsigned long long)l->over);
    for (int dir = 0; dir < SH_DIRS; dir++) {
        const sh_dir *d = &m->d[dir];
        const sh_params *p = &d->p;
        sh_sb_printf(b, "%s\"%s\":{\"arrived\":%llu,\"released\":%llu,\"dropped_loss\":%llu,"
                  "\"dropped_queue\":%llu,\"dropped_full\":%llu,\"held\":%u,\"params\":{"
                  "\"loss\":%.6g,\"ge\":%d,\"ge_p\":%.6g,\"ge_r\":%.6g,\"ge_bad_loss\":%.6g,"
                  "\"ge_good_loss\":%.6g,\"rate_bps\":%llu,\"buffer_bytes\":%llu,\"delay_ns\":%llu,"
                  "\"jitter_ns\":%llu,\"paths\":%d,\"path_rate_bps\":%llu,\"path_buffer_bytes\":%llu}}",
                  dir ? "," : "", dir == SH_UP ? "up" : "down",
                  (unsigned long long)d->arrived, (unsigned long long)d->released,
                  (unsigned long long)d->dropped_loss, (unsigned long long)d->dropped_queue,
                  (unsigned long long)d->dropped_full, sh_model_held(m, dir),
                  p->loss, p->ge, p->ge_p, p->ge_r, p->ge_bad_loss, p->ge_good_loss,
                  (unsigned long long)p->rate_bps, (unsigned long long)p->buffer_bytes,
                  (unsigned long long)p->delay_ns, (unsigned long long)p->jitter_ns, p->paths,
                  (unsigned long long)p->path_rate_bps, (unsigned long long)p->path_buffer_bytes);
    }
    sh_sb_printf(b, "},\"flows_overflow\":%llu,\"flows\":[", (unsigned long long)m->flows_overflow);
    int first = 1;
    for (uint32_t i = 0; i < SH_FLOWS; i++) {
        const sh_flow *f = &m->flows[i];
        if (!f->used) continue;
        char ci[16], si[16];
        ip_str(f->key.cli_ip, ci);
        ip_str(f->key.srv_ip, si);
        sh_sb_printf(b, "%s{\"proto\":%u,\"client_ip\":\"%s\",\"client_port\":%u,\"server_ip\":\"%s\","
                  "\"server_port\":%u,\"path\":%d,\"packets_up\":%llu,\"bytes_up\":%llu,\"drops_up\":%llu,"
                  "\"packets_down\":%llu,\"bytes_down\":%llu,\"drops_down\":%llu,\"first_ns\":%llu,"
                  "\"last_ns\":%llu,\"first_drop_up_ns\":%llu,\"first_drop_down_ns\":%llu}",
                  first ? "" : ",", f->key.proto, ci, f->key.cli_port, si, f->key.srv_port,
                  sh_ecmp_path(&f->key),
                  (unsigned long long)f->packets[SH_UP], (unsigned long long)f->bytes[SH_UP],
                  (unsigned long long)f->drops[SH_UP], (unsigned long long)f->packets[SH_DOWN],
                  (unsigned long long)f->bytes[SH_DOWN], (unsigned long long)f->drops[SH_DOWN],
                  (unsigned long long)(f->first_ns + (uint64_t)off),
                  (unsigned long long)(f->last_ns + (uint64_t)off),
                  (unsigned long long)(f->first_drop_ns[SH_UP] ? f->first_drop_ns[SH_UP] + (uint64_t)off : 0),
                  (unsigned long long)(f->first_drop_ns[SH_DOWN] ? f->first_drop_ns[SH_DOWN] + (uint64_t)off : 0));
        first = 0;
    }
    sh_sb_printf(b, "]");
    traces_json(m, b);
    sh_sb_printf(b, "}\n");
}

/* The queue log as JSON: times on the wall clock (ns), samples as [bytes, ...] and
 * [packets, ...] per direction, oldest first. */
void sh_queue_json(const sh_model *m, uint64_t mono, uint64_t wall, sh_sbuf *b) {
    int64_t off = (int64_t)(wall - mono);
    const sh_qlog *q = m->qlog;
    sh_sb_printf(b, "{\"start_ns\":%llu,\"interval_ns\":%llu,\"now_ns\":%llu,\"samples\":%u,"
              "\"truncated\":%s,\"dirs\":{",
              (unsigned long long)(q->start_ns + (uint64_t)off), (unsigned long long)q->interval_ns,
              (unsigned long long)wall, q->n, q->truncated ? "true" : "false");
    for (int dir = 0; dir < SH_DIRS; dir++) {
        const sh_dir *d = &m->d[dir];
        sh_sb_printf(b, "%s\"%s\":{\"buffer_bytes\":%llu,\"rate_bps\":%llu,\"max_bytes\":%llu,"
                  "\"drops\":%llu,\"first_drop_ns\":%llu,\"bytes\":[",
                  dir ? "," : "", dir == SH_UP ? "up" : "down", (unsigned long long)d->p.buffer_bytes,
                  (unsigned long long)d->p.rate_bps, (unsigned long long)q->max_bytes[dir],
                  (unsigned long long)q->drops[dir],
                  (unsigned long long)(q->first_drop_ns[dir] ? q->first_drop_ns[dir] + (uint64_t)off : 0));
        for (uint32_t i = 0; i < q->n; i++) sh_sb_printf(b, "%s%u", i ? "," : "", q->bytes[dir][i]);
        sh_sb_printf(b, "],\"packets\":[");
        for (uint32_t i = 0; i < q->n; i++) sh_sb_printf(b, "%s%u", i ? "," : "", q->packets[dir][i]);
        sh_sb_printf(b, "]}");
    }
    sh_sb_printf(b, "}}\n");
}
