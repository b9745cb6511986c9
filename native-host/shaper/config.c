/* ProtoLens shaper: the config text format (written by protolens.shaper.config), parsed into a
 * schedule. Pure: text in, schedule or a one-line error out.
 *
 *   # comment
 *   name wifi
 *   seed 42
 *   loop_ns 7000000000          (optional; 0 = play once)
 *   at 0 both rate_bps=7000000 buffer_bytes=45000 delay_ns=25000000
 *   at 70000000 down loss=0.1
 *   trace down 1 1 2 3          (Mahimahi delivery opportunities in ms, appended; trace.c)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const char *KEYS[K__COUNT] = {
    "loss", "ge", "ge_p", "ge_r", "ge_bad_loss", "ge_good_loss", "rate_bps", "buffer_bytes",
    "delay_ns", "jitter_ns", "paths", "path_rate_bps", "path_buffer_bytes", "cross_ip",
};

const char *sh_key_name(int key) { return key >= 0 && key < K__COUNT ? KEYS[key] : "?"; }

static int cmp_step(const void *a, const void *b) {
    const sh_step *x = a, *y = b;
    if (x->at_ns != y->at_ns) return x->at_ns < y->at_ns ? -1 : 1;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    if (!*s || *s == '-') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int check_value(int key, double v) {
    switch (key) {
    case K_LOSS: case K_GE_P: case K_GE_R: case K_GE_BAD_LOSS: case K_GE_GOOD_LOSS:
        return v >= 0.0 && v <= 1.0;
    case K_GE: return v == 0.0 || v == 1.0;
    case K_PATHS: return v == 0.0 || v == 1.0 || v == 2.0;
    default: return v >= 0.0 && v < 1.8e19;
    }
}

/* "trace up|down MS MS ...": appends delivery opportunities (several lines may follow). */
static int parse_trace_line(sh_schedule *out, char **save, int lineno, char *err, size_t errlen) {
    char *dir = strtok_r(NULL, " \t\r", save);
    int d = dir && !strcmp(dir, "up") ? SH_UP : dir && !strcmp(dir, "down") ? SH_DOWN : -1;
    if (d < 0) { snprintf(err, errlen, "line %d: trace needs a direction (up, down)", lineno); return -1; }
    for (char *v = strtok_r(NULL, " \t\r", save); v; v = strtok_r(NULL, " \t\r", save)) {
        uint64_t ms;
        if (parse_u64(v, &ms) || ms > 0xffffffffULL) {
            snprintf(err, errlen, "line %d: trace: not a time in ms '%s'", lineno, v);
            return -1;
        }
        if (sh_trace_append(&out->trace[d], ms)) { snprintf(err, errlen, "out of memory"); return -1; }
    }
    return 0;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)

int sh_parse_config(const char *text, sh_schedule *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "unnamed");
    out->seed = 1;
    size_t cap = 64;
    out->steps = malloc(cap * sizeof(sh_step));
    char *copy = strdup(text);
    if (!out->steps || !copy) { snprintf(err, errlen, "out of memory"); free(copy); sh_schedule_free(out); return -1; }
    int lineno = 0;
    char *save_line = NULL;
    for (char *line = strtok_r(copy, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *save = NULL, *word = strtok_r(line, " \t\r", &save);
        if (!word) continue;
        if (!strcmp(word, "name")) {
            char *v = strtok_r(NULL, " \t\r", &save);
            if (!v) FAIL("line %d: name needs a value", lineno);
            snprintf(out->name, sizeof out->name, "%s", v);
        } else if (!strcmp(word, "seed") || !strcmp(word, "loop_ns")) {
            char *v = strtok_r(NULL, " \t\r", &save);
            uint64_t x;
            if (!v || parse_u64(v, &x)) FAIL("line %d: %s needs a non-negative integer", lineno, word);
            if (word[0] == 's') out->seed = x; else out->loop_ns = x;
        } else if (!strcmp(word, "at")) {
            char *t = strtok_r(NULL, " \t\r", &save), *dir = strtok_r(NULL, " \t\r", &save);
            uint64_t at;
            if (!t || parse_u64(t, &at)) FAIL("line %d: at needs a time in ns", lineno);
            uint8_t mask;
            if (!dir) FAIL("line %d: at needs a direction (up, down, both)", lineno);
            else if (!strcmp(dir, "up")) mask = 1;
            else if (!strcmp(dir, "down")) mask = 2;
            else if (!strcmp(dir, "both")) mask = 3;
            else FAIL("line %d: unknown direction '%s' (up, down, both)", lineno, dir);
            for (char *kv = strtok_r(NULL, " \t\r", &save); kv; kv = strtok_r(NULL, " \t\r", &save)) {
                char *eq = strchr(kv, '=');
                if (!eq) FAIL("line %d: expected key=value, got '%s'", lineno, kv);
                *eq = 0;
                int key = -1;
                for (int k = 0; k < K__COUNT; k++) if (!strcmp(kv, KEYS[k])) key = k;
                if (key < 0) FAIL("line %d: unknown key '%s'", lineno, kv);
                char *end;
                errno = 0;
                double v = strtod(eq + 1, &end);
                if (errno || end == eq + 1 || *end) FAIL("line %d: %s: not a number '%s'", lineno, kv, eq + 1);
                if (!check_value(key, v)) FAIL("line %d: %s=%s out of range", lineno, kv, eq + 1);
                if (out->n == SH_MAX_STEPS) FAIL("line %d: more than %d schedule entries", lineno, SH_MAX_STEPS);
                if (out->n == cap) {
                    cap *= 2;
                    sh_step *bigger = realloc(out->steps, cap * sizeof(sh_step));
                    if (!bigger) FAIL("out of memory");
                    out->steps = bigger;
                }
                out->steps[out->n++] = (sh_step){at, mask, (uint8_t)key, v};
            }
        } else if (!strcmp(word, "trace")) {
            if (parse_trace_line(out, &save, lineno, err, errlen)) goto fail;
        } else {
            FAIL("line %d: unknown directive '%s'", lineno, word);
        }
    }
    for (int d = 0; d < SH_DIRS; d++) {
        const char *why = sh_trace_check(&out->trace[d]);
        if (why) FAIL("%s trace: %s", d == SH_UP ? "up" : "down", why);
    }
    if (out->loop_ns)
        for (size_t i = 0; i < out->n; i++)
            if (out->steps[i].at_ns >= out->loop_ns)
                FAIL("step at %llu ns is not before loop_ns %llu", (unsigned long long)out->steps[i].at_ns,
                     (unsigned long long)out->loop_ns);
    /* qsort is not stable: make it stable by sorting on (at, original index) via a pass of insertion
     * sort, which is linear when the input is already ordered (the normal case). */
    for (size_t i = 1; i < out->n; i++) {
        sh_step s = out->steps[i];
        size_t j = i;
        while (j > 0 && cmp_step(&out->steps[j - 1], &s) > 0) { out->steps[j] = out->steps[j - 1]; j--; }
        out->steps[j] = s;
    }
    free(copy);
    return 0;
fail:
    free(copy);
    sh_schedule_free(out);
    return -1;
}
