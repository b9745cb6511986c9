/* ProtoLens shaper: the pure link model. See model.h. Only virtual time: every function takes
 * now_ns from the caller. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- FIFOs ---- */
static int fifo_init(sh_fifo *f) {
    memset(f, 0, sizeof *f);
    f->buf = calloc(SH_RING, sizeof(sh_pkt));
    return f->buf ? 0 : -1;
}
static sh_pkt *fifo_front(const sh_fifo *f) { return &f->buf[f->head]; }
static int fifo_push(sh_fifo *f, const sh_pkt *p) {
    if (f->count >= SH_RING) return -1;
    f->buf[(f->head + f->count) % SH_RING] = *p;
    f->count++;
    f->bytes += p->len;
    return 0;
}
static sh_pkt fifo_pop(sh_fifo *f) {
    sh_pkt p = f->buf[f->head];
    f->head = (f->head + 1) % SH_RING;
    f->count--;
    f->bytes -= p.len;
    return p;
}

static uint64_t tx_ns(uint32_t len, uint64_t rate_bps) {
    return rate_bps ? (uint64_t)len * 8000000000ULL / rate_bps : 0;
}

static void params_default(sh_params *p) { memset(p, 0, sizeof *p); }

int sh_model_init(sh_model *m) {
    memset(m, 0, sizeof *m);
    for (int d = 0; d < SH_DIRS; d++) {
        params_default(&m->d[d].p);
        if (fifo_init(&m->d[d].queue)) return -1;
        for (int k = 0; k < SH_PATHS; k++)
            if (fifo_init(&m->d[d].path[k]) || fifo_init(&m->d[d].line[k])) return -1;
    }
    m->flows = calloc(SH_FLOWS, sizeof(sh_flow));
    m->qlog = calloc(1, sizeof(sh_qlog));
    if (!m->flows || !m->qlog) return -1;
    sh_qlog_start(m, 0, SH_QLOG_INTERVAL_NS);
    sh_rng_seed(m->rng, 1);
    return 0;
}

void sh_schedule_free(sh_schedule *s) {
    for (int d = 0; d < SH_DIRS; d++) sh_trace_free(&s->trace[d]);
    free(s->steps);
    s->steps = NULL;
    s->n = 0;
}

void sh_model_free(sh_model *m) {
    for (int d = 0; d < SH_DIRS; d++) {
        free(m->d[d].queue.buf);
        for (int k = 0; k < SH_PATHS; k++) { free(m->d[d].path[k].buf); free(m->d[d].line[k].buf); }
    }
    free(m->flows);
    free(m->qlog);
    sh_schedule_free(&m->sched);
}

void sh_model_load(sh_model *m, sh_schedule *s, uint64_t now_ns) {
    sh_schedule_free(&m->sched);
    m->sched = *s;
    s->steps = NULL;
    s->n = 0;
    m->sched_start_ns = m->sched_base_ns = now_ns;
    m->sched_next = 0;
    sh_rng_seed(m->rng, m->sched.seed);
    for (int d = 0; d < SH_DIRS; d++) {
        params_default(&m->d[d].p);
        m->d[d].ge_bad = 0;
        sh_trace_start(&m->d[d].trace_pos, now_ns);
    }
    sh_model_advance(m, now_ns, NULL, NULL); /* applies the entries at offset 0 */
}

/* ---- schedule ---- */
static void set_param(sh_params *p, int key, double v) {
    switch (key) {
    case K_LOSS: p->loss = v; break;
    case K_GE: p->ge = (int)v; break;
    case K_GE_P: p->ge_p = v; break;
    case K_GE_R: p->ge_r = v; break;
    case K_GE_BAD_LOSS: p->ge_bad_loss = v; break;
    case K_GE_GOOD_LOSS: p->ge_good_loss = v; break;
    case K_RATE_BPS: p->rate_bps = (uint64_t)v; break;
    case K_BUFFER_BYTES: p->buffer_bytes = (uint64_t)v; break;
    case K_DELAY_NS: p->delay_ns = (uint64_t)v; break;
    case K_JITTER_NS: p->jitter_ns = (uint64_t)v; break;
    case K_PATHS: p->paths = (int)v; break;
    case K_PATH_RATE_BPS: p->path_rate_bps = (uint64_t)v; break;
    case K_PATH_BUFFER_BYTES: p->path_buffer_bytes = (uint64_t)v; break;
    case K_CROSS_IP: p->cross_ip = (uint32_t)v; break;
    default: break;
    }
}

static uint64_t sched_next_ns(const sh_model *m) {
    if (m->sched_next < m->sched.n) return m->sched_base_ns + m->sched.steps[m->sched_next].at_ns;
    if (m->sched.loop_ns) return m->sched_base_ns + m->sched.loop_ns;
    return UINT64_MAX;
}

static void sched_fire(sh_model *m) {
    if (m->sched_next >= m->sched.n) { /* loop wrap */
        m->sched_base_ns += m->sched.loop_ns;
        m->sched_next = 0;
        return;
    }
    const sh_step *st = &m->sched.steps[m->sched_next++];
    for (int d = 0; d < SH_DIRS; d++)
        if (st->dir_mask & (1u << d)) set_param(&m->d[d].p, st->key, st->value);
}

static void mark_first_drop(uint64_t *slot, uint64_t now_ns) {
    if (!*slot) *slot = now_ns ? now_ns : 1; /* 0 means "none" */
}

/* ---- the packet path ---- */

/* With a delivery trace the bottleneck's head leaves at its trace opportunity, not after
 * len / rate (trace.c); called whenever a packet becomes the head. */
static void trace_reschedule(sh_model *m, int dir, uint64_t t) {
    const sh_trace *tr = &m->sched.trace[dir];
    sh_fifo *q = &m->d[dir].queue;
    if (!tr->n || !q->count) return;
    const sh_pkt *h = fifo_front(q);
    q->done_ns = sh_trace_due(tr, &m->d[dir].trace_pos, h->t_ns > t ? h->t_ns : t, h->len);
}

static void count_drop(sh_model *m, int dir, const sh_pkt *p, uint64_t now_ns) {
    sh_flow *f = sh_flow_get(m, &p->key, 1);
    if (f) { f->drops[dir]++; f->last_ns = now_ns; mark_first_drop(&f->first_drop_ns[dir], now_ns); }
}

static void enter_line(sh_model *m, int dir, sh_pkt *p, uint64_t t, sh_release_fn rel, void *ctx) {
    sh_dir *d = &m->d[dir];
    int k = p->path;
    double delay = (double)d->p.delay_ns;
    if (d->p.jitter_ns) delay += sh_rng_normal(m->rng) * (double)d->p.jitter_ns;
    uint64_t rel_ns = t + (delay > 0 ? (uint64_t)delay : 0);
    if (rel_ns < d->last_release[k]) rel_ns = d->last_release[k]; /* clamp: never reorder */
    d->last_release[k] = rel_ns;
    p->t_ns = rel_ns;
    if (fifo_push(&d->line[k], p)) {
        d->dropped_full++;
        count_drop(m, dir, p, t);
        if (rel) rel(ctx, dir, p, t, 0);
    }
}

/* Push into a rate-limited FIFO stage; returns 0 if queued, -1 if dropped. */
static int enter_rate_stage(sh_dir *d, sh_fifo *f, sh_pkt *p, uint64_t rate, uint64_t limit,
                            uint64_t t) {
    if (limit && f->bytes + p->len > limit) { d->dropped_queue++; return -1; }
    p->t_ns = t;
    if (f->count == 0) f->done_ns = t + tx_ns(p->len, rate);
    if (fifo_push(f, p)) { d->dropped_full++; return -1; }
    return 0;
}

/* Returns 0 if the packet was dropped (and reported through rel when rel is set). */
static int after_queue(sh_model *m, int dir, sh_pkt *p, uint64_t t, sh_release_fn rel, void *ctx) {
    sh_dir *d = &m->d[dir];
    if (d->p.paths == SH_PATHS) {
        p->path = (uint8_t)sh_ecmp_path(&p->key);
        if (enter_rate_stage(d, &d->path[p->path], p, d->p.path_rate_bps, d->p.path_buffer_bytes, t)) {
            count_drop(m, dir, p, t);
            if (rel) rel(ctx, dir, p, t, 0);
            return 0;
        }
        return 1;
    }
    p->path = 0;
    enter_line(m, dir, p, t, rel, ctx);
    return 1;
}

int sh_model_arrive(sh_model *m, int dir, uint32_t id, uint32_t len, const sh_flowkey *key,
                    uint64_t now_ns) {
    sh_dir *d = &m->d[dir];
    sh_pkt p = {.id = id, .len = len, .key = *key, .t_ns = now_ns};
    sh_qlog_catchup(m, now_ns);
    d->arrived++;
    sh_flow *f = sh_flow_get(m, key, 1);
    if (f) {
        if (!f->first_ns) f->first_ns = now_ns;
        f->last_ns = now_ns;
    }
    if (d->p.paths == SH_PATHS && d->p.cross_ip && key->cli_ip == d->p.cross_ip)
        return after_queue(m, dir, &p, now_ns, NULL, NULL);
    int lost;
    if (d->p.ge) {
        if (d->ge_bad) { if (sh_rng_uniform(m->rng) < d->p.ge_r) d->ge_bad = 0; }
        else if (sh_rng_uniform(m->rng) < d->p.ge_p) d->ge_bad = 1;
        lost = sh_rng_uniform(m->rng) < (d->ge_bad ? d->p.ge_bad_loss : d->p.ge_good_loss);
    } else {
        lost = d->p.loss > 0 && sh_rng_uniform(m->rng) < d->p.loss;
    }
    if (lost) {
        d->dropped_loss++;
        if (f) { f->drops[dir]++; mark_first_drop(&f->first_drop_ns[dir], now_ns); }
        return 0;
    }
    if (enter_rate_stage(d, &d->queue, &p, d->p.rate_bps, d->p.buffer_bytes, now_ns)) {
        if (f) { f->drops[dir]++; mark_first_drop(&f->first_drop_ns[dir], now_ns); }
        m->qlog->drops[dir]++;
        mark_first_drop(&m->qlog->first_drop_ns[dir], now_ns);
        return 0;
    }
    if (d->queue.count == 1) trace_reschedule(m, dir, now_ns);
    if (d->queue.bytes > m->qlog->max_bytes[dir]) m->qlog->max_bytes[dir] = d->queue.bytes;
    return 1;
}

/* The earliest event: 0..SH_DIRS-1 queue heads, then paths, then lines; -1 schedule. */
typedef struct { uint64_t t; int kind, dir, k; } ev;
enum { EV_NONE, EV_SCHED, EV_QUEUE, EV_PATH, EV_LINE };

static ev next_event(const sh_model *m) {
    ev e = {sched_next_ns(m), EV_SCHED, 0, 0};
    if (e.t == UINT64_MAX) e.kind = EV_NONE;
    for (int dir = 0; dir < SH_DIRS; dir++) {
        const sh_dir *d = &m->d[dir];
        if (d->queue.count && d->queue.done_ns < e.t) e = (ev){d->queue.done_ns, EV_QUEUE, dir, 0};
        for (int k = 0; k < SH_PATHS; k++) {
            if (d->path[k].count && d->path[k].done_ns < e.t)
                e = (ev){d->path[k].done_ns, EV_PATH, dir, k};
            if (d->line[k].count && fifo_front(&d->line[k])->t_ns < e.t)
                e = (ev){fifo_front(&d->line[k])->t_ns, EV_LINE, dir, k};
        }
    }
    return e;
}

static void serve_head(sh_fifo *f, uint64_t t, uint64_t rate) {
    if (f->count) {
        sh_pkt *h = fifo_front(f);
        uint64_t start = h->t_ns > t ? h->t_ns : t;
        f->done_ns = start + tx_ns(h->len, rate);
    }
}

uint64_t sh_model_next(const sh_model *m) {
    ev e = next_event(m);
    return e.kind == EV_NONE ? UINT64_MAX : e.t;
}

void sh_model_advance(sh_model *m, uint64_t now_ns, sh_release_fn release, void *ctx) {
    for (;;) {
        ev e = next_event(m);
        if (e.kind == EV_NONE || e.t > now_ns) { sh_qlog_catchup(m, now_ns); return; }
        sh_qlog_catchup(m, e.t);
        sh_dir *d = &m->d[e.dir];
        sh_pkt p;
        switch (e.kind) {
        case EV_SCHED:
            sched_fire(m);
            break;
        case EV_QUEUE: /* the rate is applied as the packet leaves the queue */
            p = fifo_pop(&d->queue);
            serve_head(&d->queue, e.t, d->p.rate_bps);
            trace_reschedule(m, e.dir, e.t);
            after_queue(m, e.dir, &p, e.t, release, ctx);
            break;
        case EV_PATH:
            p = fifo_pop(&d->path[e.k]);
            serve_head(&d->path[e.k], e.t, d->p.path_rate_bps);
            enter_line(m, e.dir, &p, e.t, release, ctx);
            break;
        case EV_LINE: {
            p = fifo_pop(&d->line[e.k]);
            d->released++;
            sh_flow *f = sh_flow_get(m, &p.key, 1);
            if (f) {
                f->packets[e.dir]++;
                f->bytes[e.dir] += p.len;
                if (!f->first_ns) f->first_ns = e.t;
                f->last_ns = e.t;
            }
            if (release) release(ctx, e.dir, &p, e.t, 1);
            break;
        }
        default:
            return;
        }
    }
}

uint32_t sh_model_held(const sh_model *m, int dir) {
    const sh_dir *d = &m->d[dir];
    uint32_t n = d->queue.count;
    for (int k = 0; k < SH_PATHS; k++) n += d->path[k].count + d->line[k].count;
    return n;
}
