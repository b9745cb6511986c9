/* Helpers of the shaper's C unit tests (test_util.h) and their main: exit status 1 and a FAIL
 * line on any failure. Run by tests/shaper/test_shaper_model.py. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

int failures, checks;

int dropped_late;
void on_rel(void *ctx, int dir, const sh_pkt *p, uint64_t due, int accept) {
    rec *r = ctx;
    if (!accept) { dropped_late++; return; }
    if (r->n < 200000) { r->id[r->n] = p->id; r->t[r->n] = due; r->dir[r->n] = dir; r->n++; }
}

sh_model *model_with(const char *cfg) {
    static sh_model m;
    static int inited;
    if (inited) sh_model_free(&m);
    if (sh_model_init(&m)) { printf("FAIL init\n"); exit(1); }
    inited = 1;
    sh_schedule s;
    char err[256];
    if (sh_parse_config(cfg, &s, err, sizeof err)) { printf("FAIL parse: %s\n", err); exit(1); }
    sh_model_load(&m, &s, 0);
    return &m;
}

sh_flowkey key(uint16_t cport) {
    sh_flowkey k = {6, 0xc6120102, 0xc6120202, cport, 443};
    return k;
}

rec R;

void burst(sh_model *m, int dir, uint32_t n, uint32_t len) {
    R.n = 0;
    sh_flowkey k = key(1000);
    for (uint32_t i = 0; i < n; i++) sh_model_arrive(m, dir, i, len, &k, 0);
    sh_model_advance(m, 100 * MS, on_rel, &R);
}

void check_ms_spacing(int n, uint64_t delay_ns) {
    CHECK(R.n == n, "released %d of %d", R.n, n);
    for (int i = 0; i < R.n; i++)
        CHECK(R.t[i] == (uint64_t)(i + 1) * MS + delay_ns, "pkt %d at %llu", i, (unsigned long long)R.t[i]);
}

void expect_error(const char *cfg, const char *needle) {
    sh_schedule s;
    char err[256] = "";
    int rc = sh_parse_config(cfg, &s, err, sizeof err);
    CHECK(rc == -1 && strstr(err, needle), "config '%s' -> rc %d err '%s' (want '%s')", cfg, rc, err, needle);
}

int main(void) {
    run_model_tests();
    run_input_tests();
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
