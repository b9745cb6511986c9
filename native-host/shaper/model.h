/* ProtoLens shaper: the pure link model (loss -> bottleneck queue -> optional ECMP path queue
 * -> delay + jitter without reordering) on a virtual nanosecond clock, plus the per-flow counters
 * and the lateness histogram. No I/O, no clock reads: main.c is the NFQUEUE adapter around it.
 * docs/ARCHITECTURE.md "Packet-level shaping" describes the model; tests in test_model.c. */
#ifndef PL_MODEL_H
#define PL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define SH_DIRS 2            /* 0 = up (client -> server), 1 = down (server -> client) */
#define SH_PATHS 2           /* ECMP paths (IFIP'18 Sec. III-C: H mod 2) */
#define SH_RING 16384        /* packets per FIFO stage */
#define SH_FLOWS 16384       /* flow table slots (open addressing) */
#define SH_LAT_BUCKETS 20000 /* lateness histogram: 1 us buckets up to 20 ms, then overflow */
#define SH_MAX_STEPS 200000  /* schedule entries */

enum { SH_UP = 0, SH_DOWN = 1 };

/* Every parameter a schedule may change, per direction. */
enum sh_key {
    K_LOSS, K_GE, K_GE_P, K_GE_R, K_GE_BAD_LOSS, K_GE_GOOD_LOSS, K_RATE_BPS, K_BUFFER_BYTES,
    K_DELAY_NS, K_JITTER_NS, K_PATHS, K_PATH_RATE_BPS, K_PATH_BUFFER_BYTES, K_CROSS_IP, K__COUNT
};

typedef struct {
    double loss;              /* Bernoulli drop probability (when ge == 0) */
    int ge;                   /* 1: Gilbert-Elliott loss instead of Bernoulli */
    double ge_p;              /* P(good -> bad) per packet */
    double ge_r;              /* P(bad -> good) per packet */
    double ge_bad_loss;       /* drop probability in the bad state */
    double ge_good_loss;      /* drop probability in the good state */
    uint64_t rate_bps;        /* bottleneck rate, 0 = unlimited */
    uint64_t buffer_bytes;    /* drop-tail limit of the bottleneck queue, 0 = unlimited */
    uint64_t delay_ns;        /* one-way propagation delay */
    uint64_t jitter_ns;       /* stdev of the normal jitter added to delay_ns */
    int paths;                /* 0/1: no ECMP stage; 2: per-flow path queues after the bottleneck */
    uint64_t path_rate_bps;   /* rate of each ECMP path queue, 0 = unlimited */
    uint64_t path_buffer_bytes;
    uint32_t cross_ip;        /* client-side address of ECMP cross traffic: it skips loss and the
                                 access queue and only loads its path (IFIP'18 Fig. 1) */
} sh_params;

typedef struct {
    uint64_t at_ns;           /* offset from the schedule start */
    uint8_t dir_mask;         /* bit 0 up, bit 1 down */
    uint8_t key;              /* enum sh_key */
    double value;
} sh_step;

typedef struct {
    char name[64];
    uint64_t seed;
    uint64_t loop_ns;         /* 0 = play once, else repeat every loop_ns */
    size_t n;
    sh_step *steps;           /* sorted by at_ns (stable) */
    sh_trace trace[SH_DIRS];  /* delivery traces; owned */
} sh_schedule;

typedef struct {
    uint8_t proto;
    uint32_t cli_ip, srv_ip;  /* host byte order */
    uint16_t cli_port, srv_port;
} sh_flowkey;

typedef struct {
    uint32_t id;              /* adapter's packet id (NFQUEUE packet id) */
    uint32_t len;             /* IP total length in bytes */
    uint8_t path;
    sh_flowkey key;
    uint64_t t_ns;            /* arrival at the current stage, then release time in the delay line */
} sh_pkt;

typedef struct {
    sh_pkt *buf;
    uint32_t head, count;
    uint64_t bytes;
    uint64_t done_ns;         /* when the head packet finishes service (rate stages) */
} sh_fifo;

typedef struct {
    int used;
    sh_flowkey key;
    uint64_t packets[SH_DIRS], bytes[SH_DIRS], drops[SH_DIRS];
    uint64_t first_ns, last_ns;
    uint64_t first_drop_ns[SH_DIRS]; /* time of the flow's first drop per direction, 0 = none */
} sh_flow;

typedef struct {
    uint64_t count, max_ns, over;
    uint32_t hist[SH_LAT_BUCKETS];
} sh_lateness;

typedef struct {
    sh_params p;
    int ge_bad;
    sh_fifo queue;                /* bottleneck */
    sh_fifo path[SH_PATHS];       /* ECMP path queues */
    sh_fifo line[SH_PATHS];       /* delay lines, FIFO per path (release times never decrease) */
    uint64_t last_release[SH_PATHS];
    sh_trace_pos trace_pos;
    uint64_t arrived, dropped_loss, dropped_queue, dropped_full, released;
} sh_dir;

/* Bottleneck queue occupancy sampled on a fixed grid (CoNEXT'20 Sec. 4.1: Igor samples the
 * dummynet queue; ProtoLens every 10 ms). Sample i is the occupancy at start_ns + i*interval_ns,
 * before any event at that instant. Recording stops when SH_QLOG samples are full. */
#define SH_QLOG 16384
#define SH_QLOG_INTERVAL_NS 10000000ULL
typedef struct {
    uint64_t start_ns, interval_ns;
    uint32_t n;                               /* samples taken */
    int truncated;                            /* 1: more samples were due than fit */
    uint32_t bytes[SH_DIRS][SH_QLOG], packets[SH_DIRS][SH_QLOG];
    uint64_t max_bytes[SH_DIRS];              /* highest occupancy seen (at any event) */
    uint64_t first_drop_ns[SH_DIRS];          /* first drop-tail drop since start, 0 = none */
    uint64_t drops[SH_DIRS];                  /* drop-tail drops since start */
} sh_qlog;

typedef struct {
    sh_dir d[SH_DIRS];
    sh_schedule sched;
    uint64_t sched_start_ns, sched_base_ns;
    size_t sched_next;
    uint64_t rng[4];
    sh_flow *flows;
    uint32_t nflows;
    uint64_t flows_overflow;
    sh_lateness lat;
    sh_qlog *qlog;                /* allocated by sh_model_init */
} sh_model;

/* accept = 1: the packet is due now; accept = 0: it was dropped inside the model after its
 * arrival (an ECMP path queue or a full delay line), so the adapter must drop it. */
typedef void (*sh_release_fn)(void *ctx, int dir, const sh_pkt *pkt, uint64_t due_ns, int accept);

/* Lifecycle. sh_model_init allocates; returns 0 or -1. */
int sh_model_init(sh_model *m);
void sh_model_free(sh_model *m);
/* Replace the schedule (takes ownership of s->steps) and start it at now_ns: parameters reset to
 * defaults, then the entries at offset 0 apply. Queued packets stay queued. */
void sh_model_load(sh_model *m, sh_schedule *s, uint64_t now_ns);
/* A packet arrives at now_ns. Returns 1 if it was accepted into the model (the release callback
 * will fire later from sh_model_advance), 0 if it was dropped (verdict: drop now). */
int sh_model_arrive(sh_model *m, int dir, uint32_t id, uint32_t len, const sh_flowkey *key,
                    uint64_t now_ns);
/* Process every event up to now_ns in time order; release() fires for packets due. */
void sh_model_advance(sh_model *m, uint64_t now_ns, sh_release_fn release, void *ctx);
/* Earliest pending event (UINT64_MAX if none). */
uint64_t sh_model_next(const sh_model *m);
/* Packets held (queued or delayed) in a direction. */
uint32_t sh_model_held(const sh_model *m, int dir);

/* The ECMP path of a flow: (SA ^ DA ^ SP ^ DP ^ proto) mod 2, IFIP'18 Sec. III-C. */
int sh_ecmp_path(const sh_flowkey *k);

/* Flow table. */
sh_flow *sh_flow_get(sh_model *m, const sh_flowkey *k, int create);
void sh_flows_reset(sh_model *m);

/* Queue log: restart the sampling grid at now_ns (clears samples, maxima and first drops);
 * catch up fills every sample due up to now_ns with the current occupancy. The model calls
 * catch-up itself before each event; an adapter calls it before reading the log. */
void sh_qlog_start(sh_model *m, uint64_t now_ns, uint64_t interval_ns);
void sh_qlog_catchup(sh_model *m, uint64_t now_ns);

/* Lateness histogram. */
void sh_lat_record(sh_lateness *l, uint64_t late_ns);
uint64_t sh_lat_quantile(const sh_lateness *l, double q);
void sh_lat_reset(sh_lateness *l);

/* Free a schedule's steps and traces (config.c makes schedules; the model owns the one it runs). */
void sh_schedule_free(sh_schedule *s);

/* Random numbers (xoshiro256**), exposed for tests. */
void sh_rng_seed(uint64_t s[4], uint64_t seed);
double sh_rng_uniform(uint64_t s[4]);
double sh_rng_normal(uint64_t s[4]);

#endif
