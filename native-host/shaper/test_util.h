/* Shared by the shaper's C unit tests (test_model.c, test_inputs.c; one binary, build/test_model):
 * the CHECK counter, a model loaded from config text, and the release recorder. */
#ifndef SH_TEST_UTIL_H
#define SH_TEST_UTIL_H

#include <stdio.h>

#include "config.h"
#include "model.h"

extern int failures, checks;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

#define MS 1000000ULL

/* Every accepted release in order (id, due time, direction); dropped_late counts the others. */
typedef struct { int n; uint32_t id[200000]; uint64_t t[200000]; int dir[200000]; } rec;
extern rec R;
extern int dropped_late;
void on_rel(void *ctx, int dir, const sh_pkt *p, uint64_t due, int accept);

/* The one model of the tests, freed and loaded again from config text (exits on a parse error). */
sh_model *model_with(const char *cfg);
/* A TCP flow from the testbed client to its server, by client port. */
sh_flowkey key(uint16_t cport);
/* R emptied, n packets of len bytes of the flow key(1000) arriving in direction dir at 0, the
 * model advanced to 100 ms: what was released is in R. */
void burst(sh_model *m, int dir, uint32_t n, uint32_t len);
/* R holds n packets, the i-th released at (i + 1) ms + delay_ns (1500 bytes at 12 Mbit/s). */
void check_ms_spacing(int n, uint64_t delay_ns);
/* The config text must be refused with an error containing needle. */
void expect_error(const char *cfg, const char *needle);

void run_model_tests(void);   /* test_model.c: the packet path on the virtual clock */
void run_input_tests(void);   /* test_inputs.c: config text, delivery traces, the ECMP vectors */

#endif
