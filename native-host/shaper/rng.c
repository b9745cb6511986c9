/* ProtoLens shaper: the model's random numbers (loss, Gilbert-Elliott, jitter): xoshiro256**
 * seeded by splitmix64 (Blackman & Vigna), so a seeded profile replays. Pure; declared in model.h. */
#include "model.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sh_rng_seed(uint64_t s[4], uint64_t seed) {
    for (int i = 0; i < 4; i++) s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(uint64_t s[4]) {
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return result;
}

double sh_rng_uniform(uint64_t s[4]) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

double sh_rng_normal(uint64_t s[4]) {
    double u1 = 1.0 - sh_rng_uniform(s), u2 = sh_rng_uniform(s); /* u1 in (0, 1] */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
