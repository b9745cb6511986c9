/* ProtoLens shaper: what the model counts beside the packet path: the per-flow counters (and
 * their ECMP path), the bottleneck queue's log and the lateness histogram of releases. Pure: every
 * function takes now_ns from the caller; declared in model.h. */
#include "model.h"

#include <math.h>
#include <string.h>

/* ---- flows ---- */
static uint32_t flow_hash(const sh_flowkey *k) {
    uint64_t x = ((uint64_t)k->cli_ip << 32 | k->srv_ip) ^
                 ((uint64_t)k->cli_port << 24 | (uint64_t)k->srv_port << 8 | k->proto) * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 32;
    return (uint32_t)x;
}

static int key_eq(const sh_flowkey *a, const sh_flowkey *b) {
    return a->proto == b->proto && a->cli_ip == b->cli_ip && a->srv_ip == b->srv_ip &&
           a->cli_port == b->cli_port && a->srv_port == b->srv_port;
}

sh_flow *sh_flow_get(sh_model *m, const sh_flowkey *k, int create) {
    uint32_t i = flow_hash(k) % SH_FLOWS;
    for (uint32_t n = 0; n < SH_FLOWS; n++, i = (i + 1) % SH_FLOWS) {
        sh_flow *f = &m->flows[i];
        if (!f->used) {
            if (!create) return NULL;
            if (m->nflows >= SH_FLOWS * 9 / 10) { m->flows_overflow++; return NULL; }
            memset(f, 0, sizeof *f);
            f->used = 1;
            f->key = *k;
            m->nflows++;
            return f;
        }
        if (key_eq(&f->key, k)) return f;
    }
    return NULL;
}

void sh_flows_reset(sh_model *m) {
    memset(m->flows, 0, SH_FLOWS * sizeof(sh_flow));
    m->nflows = 0;
    m->flows_overflow = 0;
}

int sh_ecmp_path(const sh_flowkey *k) {
    uint32_t h = k->cli_ip ^ k->srv_ip ^ k->cli_port ^ k->srv_port ^ k->proto;
    return (int)(h % 2);
}

/* ---- queue log (CoNEXT'20 Sec. 4.1: the queue's growth and the first drop tell loss-based
 * from delay-based senders) ---- */
void sh_qlog_start(sh_model *m, uint64_t now_ns, uint64_t interval_ns) {
    memset(m->qlog, 0, sizeof *m->qlog);
    m->qlog->start_ns = now_ns;
    m->qlog->interval_ns = interval_ns ? interval_ns : SH_QLOG_INTERVAL_NS;
}

void sh_qlog_catchup(sh_model *m, uint64_t now_ns) {
    sh_qlog *q = m->qlog;
    if (now_ns < q->start_ns) return;
    uint64_t due = (now_ns - q->start_ns) / q->interval_ns + 1; /* samples at or before now */
    while (q->n < due) {
        if (q->n >= SH_QLOG) { q->truncated = 1; return; }
        for (int d = 0; d < SH_DIRS; d++) {
            q->bytes[d][q->n] = (uint32_t)m->d[d].queue.bytes;
            q->packets[d][q->n] = m->d[d].queue.count;
        }
        q->n++;
    }
}

/* ---- lateness ---- */
void sh_lat_record(sh_lateness *l, uint64_t late_ns) {
    l->count++;
    if (late_ns > l->max_ns) l->max_ns = late_ns;
    uint64_t b = late_ns / 1000;
    if (b >= SH_LAT_BUCKETS) l->over++;
    else l->hist[b]++;
}

uint64_t sh_lat_quantile(const sh_lateness *l, double q) {
    if (!l->count) return 0;
    uint64_t target = (uint64_t)ceil(q * (double)l->count), seen = 0;
    if (target == 0) target = 1;
    for (uint64_t b = 0; b < SH_LAT_BUCKETS; b++) {
        seen += l->hist[b];
        if (seen >= target) {
            uint64_t upper = (b + 1) * 1000;
            return upper < l->max_ns ? upper : l->max_ns;
        }
    }
    return l->max_ns;
}

void sh_lat_reset(sh_lateness *l) { memset(l, 0, sizeof *l); }
