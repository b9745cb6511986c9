/* Unit tests of the pure shaper model's packet path on a virtual clock (no packets, no NFQUEUE):
 * delay, rate, drop-tail, loss, jitter, schedules, flows and ECMP, the queue log, lateness. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static void test_delay(void) {
    sh_model *m = model_with("at 0 both delay_ns=25000000\n");
    R.n = 0;
    sh_flowkey k = key(1000);
    CHECK(sh_model_arrive(m, SH_DOWN, 7, 1500, &k, 1 * MS) == 1, "accepted");
    sh_model_advance(m, 26 * MS - 1, on_rel, &R);
    CHECK(R.n == 0, "released early: %d", R.n);
    CHECK(sh_model_next(m) == 26 * MS, "next event %llu", (unsigned long long)sh_model_next(m));
    sh_model_advance(m, 26 * MS, on_rel, &R);
    CHECK(R.n == 1 && R.id[0] == 7 && R.t[0] == 26 * MS, "released at %llu", (unsigned long long)R.t[0]);
}

static void test_rate_on_leaving(void) {
    /* 12 Mbit/s: a 1500-byte packet takes exactly 1 ms to leave the queue. */
    sh_model *m = model_with("at 0 down rate_bps=12000000 delay_ns=5000000\n");
    burst(m, SH_DOWN, 10, 1500);
    check_ms_spacing(10, 5 * MS);
    /* The rate applies as packets leave: a rate change while packets wait affects the next ones. */
    m = model_with("at 0 down rate_bps=12000000\nat 2500000 down rate_bps=6000000\n");
    burst(m, SH_DOWN, 4, 1500);
    CHECK(R.n == 4 && R.t[0] == 1 * MS && R.t[1] == 2 * MS && R.t[2] == 3 * MS && R.t[3] == 5 * MS,
          "rate change: %llu %llu %llu %llu", (unsigned long long)R.t[0], (unsigned long long)R.t[1],
          (unsigned long long)R.t[2], (unsigned long long)R.t[3]);
}

static void test_droptail(void) {
    sh_model *m = model_with("at 0 down rate_bps=1000000 buffer_bytes=4500\n");
    sh_flowkey k = key(1000);
    int acc = 0;
    for (uint32_t i = 0; i < 5; i++) acc += sh_model_arrive(m, SH_DOWN, i, 1500, &k, 0);
    CHECK(acc == 3, "accepted %d of 5 with a 4500-byte buffer", acc);
    CHECK(m->d[SH_DOWN].dropped_queue == 2, "dropped_queue %llu", (unsigned long long)m->d[SH_DOWN].dropped_queue);
    sh_flow *f = sh_flow_get(m, &k, 0);
    CHECK(f && f->drops[SH_DOWN] == 2, "flow drops");
    /* Once the head leaves (12 ms at 1 Mbit/s), there is room for one more. */
    sh_model_advance(m, 12 * MS, NULL, NULL);
    CHECK(sh_model_arrive(m, SH_DOWN, 9, 1500, &k, 12 * MS) == 1, "room after a departure");
    /* The other direction is unaffected. */
    CHECK(sh_model_arrive(m, SH_UP, 10, 1500, &k, 12 * MS) == 1, "up unshaped");
}

static void test_bernoulli(void) {
    sh_model *m = model_with("seed 5\nat 0 both loss=0.02\n");
    sh_flowkey k = key(1000);
    int n = 100000, lost = 0;
    for (int i = 0; i < n; i++) {
        lost += !sh_model_arrive(m, SH_DOWN, (uint32_t)i, 100, &k, (uint64_t)i * 1000);
        sh_model_advance(m, (uint64_t)i * 1000, NULL, NULL);
    }
    double rate = (double)lost / n;
    CHECK(fabs(rate - 0.02) < 0.0015, "bernoulli loss %.4f", rate);
}

static void test_gilbert_elliott(void) {
    /* Stationary bad-state share p/(p+r) = 0.01/0.11; loss inside bad 0.5 -> ~4.5%, in bursts. */
    sh_model *m = model_with("seed 9\nat 0 down ge=1 ge_p=0.01 ge_r=0.1 ge_bad_loss=0.5 ge_good_loss=0\n");
    sh_flowkey k = key(1000);
    int n = 200000, lost = 0, runs = 0, prev = 0;
    for (int i = 0; i < n; i++) {
        int l = !sh_model_arrive(m, SH_DOWN, (uint32_t)i, 100, &k, 0);
        sh_model_advance(m, 0, NULL, NULL);
        lost += l;
        if (l && !prev) runs++;
        prev = l;
    }
    sh_model_advance(m, 0, NULL, NULL);
    double rate = (double)lost / n, expect = 0.01 / 0.11 * 0.5;
    CHECK(fabs(rate - expect) < 0.006, "GE loss %.4f expected %.4f", rate, expect);
    CHECK((double)lost / runs > 1.3, "GE losses are bursty: mean run %.2f", (double)lost / runs);
}

static void test_jitter_no_reorder(void) {
    sh_model *m = model_with("seed 3\nat 0 down delay_ns=50000000 jitter_ns=70000000\n");
    R.n = 0;
    sh_flowkey k = key(1000);
    for (uint32_t i = 0; i < 5000; i++) {
        sh_model_advance(m, i * MS, on_rel, &R);
        sh_model_arrive(m, SH_DOWN, i, 1000, &k, i * MS);
    }
    sh_model_advance(m, 100000 * MS, on_rel, &R);
    CHECK(R.n == 5000, "all released: %d", R.n);
    int inorder = 1;
    double sum = 0;
    for (int i = 0; i < R.n; i++) {
        if (R.id[i] != (uint32_t)i) inorder = 0;
        if (i && R.t[i] < R.t[i - 1]) inorder = 0;
        sum += (double)(R.t[i] - (uint64_t)R.id[i] * MS);
    }
    CHECK(inorder, "reordered");
    double mean_ms = sum / R.n / 1e6;
    CHECK(mean_ms >= 50.0, "mean delay %.1f ms below the 50 ms mean despite clamping", mean_ms);
    int distinct = 0;
    for (int i = 1; i < R.n; i++) distinct += (R.t[i] - R.t[i - 1]) != 1 * MS;
    CHECK(distinct > 100, "jitter changes spacing (%d)", distinct);
}

static void test_schedule(void) {
    sh_model *m = model_with("loop_ns 200000000\nat 0 both delay_ns=10000000\nat 100000000 both delay_ns=50000000\n");
    R.n = 0;
    sh_flowkey k = key(1000);
    uint64_t at[] = {50 * MS, 150 * MS, 250 * MS, 350 * MS};
    uint64_t want[] = {60 * MS, 200 * MS, 260 * MS, 400 * MS};
    for (int i = 0; i < 4; i++) {
        sh_model_advance(m, at[i], on_rel, &R);
        CHECK(m->d[SH_UP].p.delay_ns == (i % 2 ? 50 : 10) * MS, "param at step %d", i);
        sh_model_arrive(m, SH_UP, (uint32_t)i, 100, &k, at[i]);
    }
    sh_model_advance(m, 1000 * MS, on_rel, &R);
    CHECK(R.n == 4, "released %d", R.n);
    for (int i = 0; i < R.n; i++)
        CHECK(R.t[i] == want[i], "looped schedule pkt %d at %llu want %llu", i, (unsigned long long)R.t[i],
              (unsigned long long)want[i]);
    /* Play once: the last value stays. */
    m = model_with("at 0 up delay_ns=1000000\nat 70000000 up delay_ns=2000000\n");
    sh_model_advance(m, 500 * MS, NULL, NULL);
    CHECK(m->d[SH_UP].p.delay_ns == 2 * MS, "last step stays");
    CHECK(m->d[SH_DOWN].p.delay_ns == 0, "direction mask");
    CHECK(sh_model_next(m) == UINT64_MAX, "no more events");
}

static void test_flows_and_ecmp(void) {
    sh_model *m = model_with("at 0 both paths=2 path_rate_bps=12000000\n");
    R.n = 0;
    sh_flowkey a = key(1000), b = key(1001);
    CHECK(sh_ecmp_path(&a) != sh_ecmp_path(&b), "ports differing in bit 0 take different paths");
    uint32_t h = a.cli_ip ^ a.srv_ip ^ a.cli_port ^ a.srv_port ^ a.proto;
    CHECK(sh_ecmp_path(&a) == (int)(h % 2), "paper's hash");
    for (uint32_t i = 0; i < 4; i++) {
        sh_model_arrive(m, SH_DOWN, i, 1500, &a, 0);
        sh_model_arrive(m, SH_DOWN, 100 + i, 1500, &b, 0);
    }
    sh_model_arrive(m, SH_UP, 200, 60, &a, 0);
    sh_model_advance(m, 100 * MS, on_rel, &R);
    CHECK(R.n == 9, "released %d", R.n);
    /* Two paths serve in parallel: 4 packets each at 1 ms per packet -> last at 4 ms, not 8. */
    uint64_t last = 0;
    for (int i = 0; i < R.n; i++) if (R.t[i] > last) last = R.t[i];
    CHECK(last == 4 * MS, "parallel paths, last at %llu", (unsigned long long)last);
    sh_flow *fa = sh_flow_get(m, &a, 0), *fb = sh_flow_get(m, &b, 0);
    CHECK(fa && fa->bytes[SH_DOWN] == 6000 && fa->packets[SH_DOWN] == 4 && fa->bytes[SH_UP] == 60,
          "flow a counters");
    CHECK(fb && fb->bytes[SH_DOWN] == 6000 && fb->bytes[SH_UP] == 0, "flow b counters");
    sh_flows_reset(m);
    CHECK(sh_flow_get(m, &a, 0) == NULL && m->nflows == 0, "reset");

    /* Cross traffic (client address 198.18.1.10) skips the 1 Mbit/s access queue and loss and
     * only loads its path; a full path queue drops late, through the callback. */
    m = model_with("at 0 both rate_bps=1000000 loss=1 paths=2 path_rate_bps=12000000 "
                   "path_buffer_bytes=3000 cross_ip=3323068682\n");
    R.n = 0;
    dropped_late = 0;
    sh_flowkey x = {17, 0xc612010a, 0xc6120202, 5000, 5201};
    int acc = 0;
    for (uint32_t i = 0; i < 3; i++) acc += sh_model_arrive(m, SH_DOWN, i, 1500, &x, 0);
    CHECK(acc == 2, "cross traffic: path buffer holds 2, accepted %d", acc);
    sh_model_advance(m, 100 * MS, on_rel, &R);
    CHECK(R.n == 2 && R.t[1] == 2 * MS, "cross traffic served at the path rate only");
    CHECK(sh_model_arrive(m, SH_DOWN, 9, 1500, &a, 100 * MS) == 0, "normal traffic still lossy");
    /* A normal packet dropped in the path stage (after the access queue) is reported late. */
    m = model_with("at 0 down rate_bps=0 paths=2 path_rate_bps=1000 path_buffer_bytes=1500\n");
    dropped_late = 0;
    sh_model_arrive(m, SH_DOWN, 1, 1500, &a, 0);
    sh_model_arrive(m, SH_DOWN, 2, 1500, &a, 0);
    sh_model_advance(m, 0, on_rel, &R);
    CHECK(dropped_late == 1, "late drop reported: %d", dropped_late);
}

static void test_queue_log(void) {
    /* 1 Mbit/s: a 1500-byte packet takes 12 ms to leave. Ten packets arrive at 5 ms; the grid
     * starts at 0 with 10 ms steps, so the sample at 10 ms sees all ten, at 20 ms nine (the
     * first left at 17 ms), at 30 ms eight (the second at 29 ms). */
    sh_model *m = model_with("at 0 down rate_bps=1000000 buffer_bytes=100000 delay_ns=50000000\n");
    sh_qlog_start(m, 0, 10 * MS);
    sh_flowkey k = key(1000);
    for (uint32_t i = 0; i < 10; i++) sh_model_arrive(m, SH_DOWN, i, 1500, &k, 5 * MS);
    sh_model_advance(m, 35 * MS, NULL, NULL);
    const sh_qlog *q = m->qlog;
    CHECK(q->n == 4, "samples at 0, 10, 20, 30 ms: %u", q->n);
    CHECK(q->bytes[SH_DOWN][0] == 0 && q->bytes[SH_DOWN][1] == 15000 && q->bytes[SH_DOWN][2] == 13500 &&
          q->bytes[SH_DOWN][3] == 12000, "occupancy %u %u %u %u", q->bytes[SH_DOWN][0], q->bytes[SH_DOWN][1],
          q->bytes[SH_DOWN][2], q->bytes[SH_DOWN][3]);
    CHECK(q->packets[SH_DOWN][1] == 10 && q->packets[SH_DOWN][3] == 8, "packets %u %u",
          q->packets[SH_DOWN][1], q->packets[SH_DOWN][3]);
    CHECK(q->bytes[SH_UP][1] == 0, "the other direction is sampled on its own");
    CHECK(q->max_bytes[SH_DOWN] == 15000 && q->first_drop_ns[SH_DOWN] == 0 && q->drops[SH_DOWN] == 0,
          "max %llu, no drop", (unsigned long long)q->max_bytes[SH_DOWN]);
    /* Idle time is filled when the model next runs: departures at 101, 113 and 125 ms. */
    sh_model_advance(m, 300 * MS, NULL, NULL);
    CHECK(q->n == 31 && q->bytes[SH_DOWN][11] == 3000 && q->bytes[SH_DOWN][12] == 1500 &&
          q->bytes[SH_DOWN][13] == 0 && q->bytes[SH_DOWN][30] == 0,
          "n %u, at 110 ms %u, at 120 ms %u", q->n, q->bytes[SH_DOWN][11], q->bytes[SH_DOWN][12]);

    /* Drop-tail: the first drop's time, per direction and per flow. */
    m = model_with("at 0 down rate_bps=1000000 buffer_bytes=4500\n");
    sh_qlog_start(m, 0, 10 * MS);
    q = m->qlog;
    sh_flowkey k2 = key(2000);
    for (uint32_t i = 0; i < 3; i++) sh_model_arrive(m, SH_DOWN, i, 1500, &k, 7 * MS);
    CHECK(q->first_drop_ns[SH_DOWN] == 0, "no drop while it fits");
    sh_model_arrive(m, SH_DOWN, 3, 1500, &k2, 8 * MS);
    sh_model_arrive(m, SH_DOWN, 4, 1500, &k, 9 * MS);
    CHECK(q->first_drop_ns[SH_DOWN] == 8 * MS && q->drops[SH_DOWN] == 2 && q->first_drop_ns[SH_UP] == 0,
          "first drop at %llu, drops %llu", (unsigned long long)q->first_drop_ns[SH_DOWN],
          (unsigned long long)q->drops[SH_DOWN]);
    sh_flow *f = sh_flow_get(m, &k, 0), *f2 = sh_flow_get(m, &k2, 0);
    CHECK(f && f->first_drop_ns[SH_DOWN] == 9 * MS && f->first_drop_ns[SH_UP] == 0, "flow first drop");
    CHECK(f2 && f2->first_drop_ns[SH_DOWN] == 8 * MS, "other flow's first drop");
    /* Restarting the log forgets the drop and the maximum; the grid starts at the new time. */
    sh_qlog_start(m, 20 * MS, 10 * MS);
    sh_model_advance(m, 25 * MS, NULL, NULL);
    CHECK(q->first_drop_ns[SH_DOWN] == 0 && q->max_bytes[SH_DOWN] == 0 && q->n == 1 &&
          q->bytes[SH_DOWN][0] == 3000, "restart: n %u, first sample %u", q->n, q->bytes[SH_DOWN][0]);
    /* A random loss is a flow drop but not a queue drop. */
    m = model_with("at 0 down loss=1\n");
    sh_qlog_start(m, 0, 10 * MS);
    sh_model_arrive(m, SH_DOWN, 1, 100, &k, 3 * MS);
    f = sh_flow_get(m, &k, 0);
    CHECK(f && f->first_drop_ns[SH_DOWN] == 3 * MS && m->qlog->drops[SH_DOWN] == 0, "loss vs queue drop");
}

static void test_lateness(void) {
    sh_lateness l;
    sh_lat_reset(&l);
    for (int i = 0; i < 99; i++) sh_lat_record(&l, 500);
    sh_lat_record(&l, 5000000);
    CHECK(l.max_ns == 5000000, "max");
    CHECK(sh_lat_quantile(&l, 0.5) == 1000, "p50 (1 us buckets, upper bound) %llu", (unsigned long long)sh_lat_quantile(&l, 0.5));
    CHECK(sh_lat_quantile(&l, 0.99) == 1000, "p99 %llu", (unsigned long long)sh_lat_quantile(&l, 0.99));
    CHECK(sh_lat_quantile(&l, 1.0) == 5000000, "p100");
}

void run_model_tests(void) {
    test_delay();
    test_rate_on_leaving();
    test_droptail();
    test_bernoulli();
    test_gilbert_elliott();
    test_jitter_no_reorder();
    test_schedule();
    test_flows_and_ecmp();
    test_queue_log();
    test_lateness();
}
