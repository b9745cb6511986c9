/* Unit tests of what the shaper model reads: its config text, Mahimahi delivery traces, and the
 * ECMP vectors shared with the Python side. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The shared ECMP vectors (testdata/ecmp_vectors.json, also read by
 * tests/shaper/test_shaper_ecmp.py): C and Python must pick the same path for every flow. */
static const char *json_field(const char *obj, const char *end, const char *name) {
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", name);
    const char *f = strstr(obj, pat);
    return f && f < end ? f + strlen(pat) : NULL;
}

static uint32_t json_ip(const char *v) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!v || sscanf(v, " \"%u.%u.%u.%u\"", &a, &b, &c, &d) != 4) return 0xffffffffu;
    return a << 24 | b << 16 | c << 8 | d;
}

static void test_ecmp_vectors(void) {
    FILE *f = fopen(SH_TESTDATA "/ecmp_vectors.json", "rb");
    CHECK(f != NULL, "cannot open %s/ecmp_vectors.json", SH_TESTDATA);
    if (!f) return;
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    int seen = 0;
    const char *p = strstr(text, "\"vectors\"");
    while (p && (p = strchr(p, '{')) != NULL) {
        const char *end = strchr(p, '}');
        if (!end) break;
        const char *proto = json_field(p, end, "proto"), *cp = json_field(p, end, "cli_port"),
                   *sp = json_field(p, end, "srv_port"), *path = json_field(p, end, "path");
        CHECK(proto && cp && sp && path, "vector %d lacks a field", seen);
        if (!(proto && cp && sp && path)) break;
        sh_flowkey k = {(uint8_t)atoi(proto), json_ip(json_field(p, end, "cli_ip")),
                        json_ip(json_field(p, end, "srv_ip")), (uint16_t)atoi(cp), (uint16_t)atoi(sp)};
        CHECK(sh_ecmp_path(&k) == atoi(path), "vector %d: C path %d, file says %d", seen,
              sh_ecmp_path(&k), atoi(path));
        seen++;
        p = end;
    }
    CHECK(seen >= 16, "only %d ECMP vectors read", seen);
}

/* ---- Mahimahi delivery traces (trace.c) ---- */
static void test_trace_constant(void) {
    /* "1": one opportunity every ms = 1500 B/ms = 12 Mbit/s; the rate key is ignored. */
    sh_model *m = model_with("at 0 down rate_bps=1000 delay_ns=5000000\ntrace down 1\n");
    burst(m, SH_DOWN, 10, 1500);
    check_ms_spacing(10, 5 * MS);
    /* the other direction has no trace and no rate: immediate */
    sh_flowkey k = key(1000);
    R.n = 0;
    sh_model_arrive(m, SH_UP, 99, 1500, &k, 200 * MS);
    sh_model_advance(m, 200 * MS, on_rel, &R);
    CHECK(R.n == 1 && R.t[0] == 200 * MS, "up untouched: %d at %llu", R.n, (unsigned long long)R.t[0]);
}

static void test_trace_shares_an_opportunity(void) {
    /* One opportunity carries 1500 bytes: 25 packets of 60 bytes fit, the 26th waits. */
    sh_model *m = model_with("trace up 10\n");
    burst(m, SH_UP, 26, 60);
    CHECK(R.n == 26 && R.t[0] == 10 * MS && R.t[24] == 10 * MS && R.t[25] == 20 * MS,
          "sharing: n %d, t24 %llu, t25 %llu", R.n, (unsigned long long)R.t[24], (unsigned long long)R.t[25]);
    /* A 1000-byte packet does not fit behind a 600-byte one: next opportunity. */
    m = model_with("trace up 10\n");
    sh_flowkey k = key(1000);
    R.n = 0;
    sh_model_arrive(m, SH_UP, 1, 600, &k, 0);
    sh_model_arrive(m, SH_UP, 2, 1000, &k, 0);
    sh_model_advance(m, 100 * MS, on_rel, &R);
    CHECK(R.n == 2 && R.t[0] == 10 * MS && R.t[1] == 20 * MS, "no fit: %llu %llu",
          (unsigned long long)R.t[0], (unsigned long long)R.t[1]);
}

static void test_trace_loops_and_skips_idle_time(void) {
    /* Opportunities at 5 and 10 ms, looped every 10 ms: 5, 10, 15, 20, ... */
    sh_model *m = model_with("trace down 5\ntrace down 10\n");
    burst(m, SH_DOWN, 4, 1500);
    sh_flowkey k = key(1000);
    CHECK(R.n == 4 && R.t[0] == 5 * MS && R.t[1] == 10 * MS && R.t[2] == 15 * MS && R.t[3] == 20 * MS,
          "loop: %llu %llu %llu %llu", (unsigned long long)R.t[0], (unsigned long long)R.t[1],
          (unsigned long long)R.t[2], (unsigned long long)R.t[3]);
    /* Opportunities pass unused while the queue is empty: a packet after an hour of idle time
     * leaves at the next one, and an arrival exactly on an opportunity takes it. */
    R.n = 0;
    uint64_t hour = 3600ULL * 1000 * MS;
    sh_model_arrive(m, SH_DOWN, 10, 1500, &k, hour + 1);
    sh_model_arrive(m, SH_DOWN, 11, 1500, &k, hour + 1);
    sh_model_advance(m, hour + 100 * MS, on_rel, &R);
    CHECK(R.n == 2 && R.t[0] == hour + 5 * MS && R.t[1] == hour + 10 * MS, "after idle: %llu %llu",
          (unsigned long long)(R.t[0] - hour), (unsigned long long)(R.t[1] - hour));
    R.n = 0;
    sh_model_arrive(m, SH_DOWN, 12, 1500, &k, hour + 25 * MS);
    sh_model_advance(m, hour + 100 * MS, on_rel, &R);
    CHECK(R.n == 1 && R.t[0] == hour + 25 * MS, "on the opportunity: %llu", (unsigned long long)(R.t[0] - hour));
}

static void test_trace_gap_stalls(void) {
    /* 1 ms opportunities for 100 ms, none for a second, then again: a packet queued in the gap
     * waits for its end. Loss and drop-tail still apply before the trace. */
    char cfg[8192] = "at 0 down buffer_bytes=3000\ntrace down";
    for (int ms = 1; ms <= 100; ms++) snprintf(cfg + strlen(cfg), sizeof cfg - strlen(cfg), " %d", ms);
    for (int ms = 1101; ms <= 1200; ms++) snprintf(cfg + strlen(cfg), sizeof cfg - strlen(cfg), " %d", ms);
    strcat(cfg, "\n");
    sh_model *m = model_with(cfg);
    R.n = 0;
    sh_flowkey k = key(1000);
    CHECK(sh_model_arrive(m, SH_DOWN, 1, 1500, &k, 150 * MS) == 1, "queued");
    CHECK(sh_model_arrive(m, SH_DOWN, 2, 1500, &k, 150 * MS) == 1, "queued");
    CHECK(sh_model_arrive(m, SH_DOWN, 3, 1500, &k, 150 * MS) == 0, "drop-tail at 3000 bytes");
    sh_model_advance(m, 1100 * MS, on_rel, &R);
    CHECK(R.n == 0, "released inside the gap: %d", R.n);
    sh_model_advance(m, 2000 * MS, on_rel, &R);
    CHECK(R.n == 2 && R.t[0] == 1101 * MS && R.t[1] == 1102 * MS, "after the gap: %llu %llu",
          (unsigned long long)R.t[0], (unsigned long long)R.t[1]);
}

static void test_trace_config_errors(void) {
    expect_error("trace down 5 3\n", "down trace: trace opportunities must not go back in time");
    expect_error("trace up 0 0\n", "up trace: a trace must last longer than 0 ms");
    expect_error("trace sideways 1\n", "line 1: trace needs a direction");
    expect_error("trace down 1 x\n", "line 1: trace: not a time in ms 'x'");
    expect_error("trace down -1\n", "not a time in ms '-1'");
}

static void test_parser(void) {
    sh_schedule s;
    char err[256];
    CHECK(sh_parse_config("name wifi\nseed 7\n# c\nat 5 up loss=0.5\nat 0 both delay_ns=3\n", &s, err, sizeof err) == 0,
          "parse ok: %s", err);
    CHECK(!strcmp(s.name, "wifi") && s.seed == 7 && s.n == 2 && s.steps[0].at_ns == 0 &&
          s.steps[0].key == K_DELAY_NS && s.steps[1].dir_mask == 1, "parsed fields sorted");
    sh_schedule_free(&s);
    expect_error("at 0 both lost=0.1\n", "unknown key 'lost'");
    expect_error("at 0 both loss=1.5\n", "out of range");
    expect_error("at 0 sideways loss=0\n", "unknown direction");
    expect_error("at -5 both loss=0\n", "time in ns");
    expect_error("at 0 both rate_bps=fast\n", "not a number");
    expect_error("loop_ns 100\nat 100 both loss=0\n", "not before loop_ns");
    expect_error("bogus 1\n", "unknown directive");
    expect_error("at 0 both paths=3\n", "out of range");
}

void run_input_tests(void) {
    test_ecmp_vectors();
    test_trace_constant();
    test_trace_shares_an_opportunity();
    test_trace_loops_and_skips_idle_time();
    test_trace_gap_stalls();
    test_trace_config_errors();
    test_parser();
}
