/* ProtoLens shaper: the NFQUEUE adapter around the pure model (model.c). One event loop: poll()
 * on the netfilter queue socket, an absolute CLOCK_MONOTONIC timerfd and a unix control socket.
 * Each packet's verdict is held until the model releases it; lateness of every release against
 * its due time is recorded so a run can be flagged.
 *
 * usage: protolens-shaper --queue-up N --queue-down N --config FILE --control SOCK [--rt-prio P]
 * control (one line per connection): ping | stats | stats-reset | reset | load PATH |
 *   queue | queue-reset   (the bottleneck queue's occupancy every 10 ms and the first drop)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "model.h"
#include "status.h"

typedef struct {
    sh_model m;
    struct nfq_q_handle *qh[SH_DIRS];
    uint64_t now;                 /* monotonic ns of the current loop iteration */
    int rt;
    char config_path[4096];
} shaper;

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static uint64_t clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("protolens-shaper: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) { cap *= 2; char *b = realloc(buf, cap); if (!b) { free(buf); buf = NULL; } else buf = b; }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static int load_config(shaper *s, const char *path, char *err, size_t errlen) {
    char *text = read_file(path);
    if (!text) { snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno)); return -1; }
    sh_schedule sched;
    int rc = sh_parse_config(text, &sched, err, errlen);
    free(text);
    if (rc) return -1;
    sh_model_load(&s->m, &sched, clock_ns(CLOCK_MONOTONIC));
    snprintf(s->config_path, sizeof s->config_path, "%s", path);
    return 0;
}

/* ---- packets ---- */
static void on_release(void *ctx, int dir, const sh_pkt *p, uint64_t due_ns, int accept) {
    shaper *s = ctx;
    nfq_set_verdict(s->qh[dir], p->id, accept ? NF_ACCEPT : NF_DROP, 0, NULL);
    if (accept) sh_lat_record(&s->m.lat, s->now > due_ns ? s->now - due_ns : 0);
}

static int parse_key(const unsigned char *pkt, int len, int dir, sh_flowkey *k, uint32_t *iplen) {
    memset(k, 0, sizeof *k);
    if (len < 20 || (pkt[0] >> 4) != 4) { *iplen = (uint32_t)(len > 0 ? len : 0); return -1; }
    int ihl = (pkt[0] & 0x0f) * 4;
    *iplen = (uint32_t)(pkt[2] << 8 | pkt[3]);
    uint32_t src = (uint32_t)pkt[12] << 24 | pkt[13] << 16 | pkt[14] << 8 | pkt[15];
    uint32_t dst = (uint32_t)pkt[16] << 24 | pkt[17] << 16 | pkt[18] << 8 | pkt[19];
    uint16_t sp = 0, dp = 0;
    k->proto = pkt[9];
    int frag_off = (pkt[6] & 0x1f) << 8 | pkt[7];
    if ((k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP) && frag_off == 0 && len >= ihl + 4) {
        sp = (uint16_t)(pkt[ihl] << 8 | pkt[ihl + 1]);
        dp = (uint16_t)(pkt[ihl + 2] << 8 | pkt[ihl + 3]);
    }
    if (dir == SH_UP) { k->cli_ip = src; k->srv_ip = dst; k->cli_port = sp; k->srv_port = dp; }
    else { k->cli_ip = dst; k->srv_ip = src; k->cli_port = dp; k->srv_port = sp; }
    return 0;
}

static shaper *g_cb_shaper;

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *nfmsg, struct nfq_data *nfa, void *data) {
    (void)nfmsg;
    shaper *s = g_cb_shaper;
    int dir = (int)(intptr_t)data;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    if (!ph) return 0;
    uint32_t id = ntohl(ph->packet_id);
    unsigned char *payload;
    int len = nfq_get_payload(nfa, &payload);
    sh_flowkey key;
    uint32_t iplen;
    parse_key(payload, len, dir, &key, &iplen);
    s->now = clock_ns(CLOCK_MONOTONIC);
    sh_model_advance(&s->m, s->now, on_release, s);
    if (!sh_model_arrive(&s->m, dir, id, iplen, &key, s->now)) nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
    return 0;
}

static void handle_control(shaper *s, int lfd) {
    int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return;
    struct timeval tv = {0, 200000};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timeval tw = {2, 0};
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tw, sizeof tw);
    char line[4200];
    size_t n = 0;
    while (n < sizeof line - 1) {
        ssize_t r = read(c, line + n, sizeof line - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        if (memchr(line, '\n', n)) break;
    }
    line[n] = 0;
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    sh_sbuf b = {malloc(65536), 0, 65536};
    if (!b.buf) { close(c); return; }
    b.buf[0] = 0;
    if (!strcmp(line, "ping")) {
        sh_sb_printf(&b, "pong %s\n", s->m.sched.name);
    } else if (!strcmp(line, "stats") || !strcmp(line, "stats-reset")) {
        sh_status_ctx ctx = {s->config_path, (int)getpid(), s->rt, clock_ns(CLOCK_MONOTONIC),
                             clock_ns(CLOCK_REALTIME)};
        sh_stats_json(&s->m, &ctx, &b);
        if (line[5]) { sh_flows_reset(&s->m); sh_lat_reset(&s->m.lat); }
    } else if (!strcmp(line, "queue")) {
        uint64_t mono = clock_ns(CLOCK_MONOTONIC), wall = clock_ns(CLOCK_REALTIME);
        sh_qlog_catchup(&s->m, mono);
        sh_queue_json(&s->m, mono, wall, &b);
    } else if (!strcmp(line, "queue-reset")) {
        sh_model_advance(&s->m, clock_ns(CLOCK_MONOTONIC), on_release, s);
        sh_qlog_start(&s->m, clock_ns(CLOCK_MONOTONIC), SH_QLOG_INTERVAL_NS);
        sh_sb_printf(&b, "ok\n");
    } else if (!strcmp(line, "reset")) {
        sh_flows_reset(&s->m);
        sh_lat_reset(&s->m.lat);
        sh_sb_printf(&b, "ok\n");
    } else if (!strncmp(line, "load ", 5)) {
        char err[256];
        if (load_config(s, line + 5, err, sizeof err)) sh_sb_printf(&b, "error: %s\n", err);
        else sh_sb_printf(&b, "ok %s\n", s->m.sched.name);
    } else {
        sh_sb_printf(&b, "error: unknown command '%s'\n", line);
    }
    for (size_t off = 0; off < b.n;) {
        ssize_t w = write(c, b.buf + off, b.n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    free(b.buf);
    close(c);
}

static void arm(int tfd, uint64_t at_ns) {
    struct itimerspec its = {0};
    if (at_ns != UINT64_MAX) {
        its.it_value.tv_sec = (time_t)(at_ns / 1000000000ULL);
        its.it_value.tv_nsec = (long)(at_ns % 1000000000ULL);
        if (!its.it_value.tv_sec && !its.it_value.tv_nsec) its.it_value.tv_nsec = 1;
    }
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

int main(int argc, char **argv) {
    int qup = -1, qdown = -1, prio = 50;
    const char *config = NULL, *control = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--queue-up") && v) { qup = atoi(v); i++; }
        else if (!strcmp(a, "--queue-down") && v) { qdown = atoi(v); i++; }
        else if (!strcmp(a, "--config") && v) { config = v; i++; }
        else if (!strcmp(a, "--control") && v) { control = v; i++; }
        else if (!strcmp(a, "--rt-prio") && v) { prio = atoi(v); i++; }
        else die("usage: protolens-shaper --queue-up N --queue-down N --config FILE --control SOCK [--rt-prio P]");
    }
    if (qup < 0 || qdown < 0 || !config || !control) die("missing --queue-up, --queue-down, --config or --control");

    static shaper s;
    if (sh_model_init(&s.m)) die("out of memory");
    char err[256];
    if (load_config(&s, config, err, sizeof err)) die("%s", err);
    g_cb_shaper = &s;

    struct nfq_handle *h = nfq_open();
    if (!h) die("nfq_open failed (root and the nfnetlink_queue module needed): %s", strerror(errno));
    nfq_unbind_pf(h, AF_INET);
    if (nfq_bind_pf(h, AF_INET) < 0) die("nfq_bind_pf: %s", strerror(errno));
    int qnum[SH_DIRS] = {qup, qdown};
    for (int d = 0; d < SH_DIRS; d++) {
        s.qh[d] = nfq_create_queue(h, (uint16_t)qnum[d], on_packet, (void *)(intptr_t)d);
        if (!s.qh[d]) die("cannot bind NFQUEUE %d (another shaper on it?): %s", qnum[d], strerror(errno));
        if (nfq_set_mode(s.qh[d], NFQNL_COPY_PACKET, 128) < 0) die("nfq_set_mode: %s", strerror(errno));
        nfq_set_queue_maxlen(s.qh[d], 16384);
    }
    int fd = nfq_fd(h);
    int rcv = 16 << 20, one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);

    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tfd < 0) die("timerfd_create: %s", strerror(errno));

    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(control) >= sizeof sa.sun_path) die("control socket path too long: %s", control);
    strcpy(sa.sun_path, control);
    unlink(control);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 8) < 0)
        die("control socket %s: %s", control, strerror(errno));
    chmod(control, 0600);

    struct sched_param sp = {.sched_priority = prio};
    s.rt = prio > 0 && sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    if (prio > 0 && !s.rt) fprintf(stderr, "protolens-shaper: warning: no real-time priority: %s\n", strerror(errno));
    mlockall(MCL_CURRENT | MCL_FUTURE);

    struct sigaction act = {.sa_handler = on_signal};
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "protolens-shaper: ready, queues %d/%d, profile %s, rt=%d\n", qup, qdown, s.m.sched.name, s.rt);

    static char buf[1 << 17];
    struct pollfd pfd[3] = {{fd, POLLIN, 0}, {tfd, POLLIN, 0}, {lfd, POLLIN, 0}};
    while (!stop) {
        int r = poll(pfd, 3, -1);
        if (r < 0 && errno != EINTR) die("poll: %s", strerror(errno));
        if (r > 0 && (pfd[0].revents & POLLIN)) {
            for (;;) {
                ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n > 0) { nfq_handle_packet(h, buf, (int)n); continue; }
                if (n < 0 && errno == ENOBUFS) continue;
                break;
            }
        }
        if (r > 0 && (pfd[1].revents & POLLIN)) {
            uint64_t exp;
            ssize_t ignored = read(tfd, &exp, sizeof exp);
            (void)ignored;
        }
        if (r > 0 && (pfd[2].revents & POLLIN)) handle_control(&s, lfd);
        s.now = clock_ns(CLOCK_MONOTONIC);
        sh_model_advance(&s.m, s.now, on_release, &s);
        arm(tfd, sh_model_next(&s.m));
    }
    /* Let every held packet go, so nothing is lost on a clean stop. */
    s.m.sched.n = 0;
    s.m.sched.loop_ns = 0;
    s.now = UINT64_MAX;
    sh_model_advance(&s.m, UINT64_MAX - 1, on_release, &s);
    for (int d = 0; d < SH_DIRS; d++) nfq_destroy_queue(s.qh[d]);
    nfq_close(h);
    unlink(control);
    sh_model_free(&s.m);
    return 0;
}
