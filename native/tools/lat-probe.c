// The C twin of lat-probe.ts (lab VM only): the same serial 8 B SEND ping-pong between rxe0
// and rxe1, the same phases, timed the same way (clock_gettime, as performance.now), so the
// cost of a verb from C and from JS can be compared in one boot.
//   gcc -O2 -o lat-probe native/tools/lat-probe.c -libverbs -lpthread && ./lat-probe [iters] [out.json|-] [touch_pages]
// `./lat-probe --bench iters warmup threads [order]` runs scripts/bench-rxe.ts's latency loop instead,
// shaped as perftest's ib_send_lat (run_iter_lat_send): every 8 B SEND signaled and its send
// completion polled right after the post (ib_send_lat's TX depth is 1, so its CQ moderation is
// 1), not inline (perftest's inline size on rxe is 0), one timestamp right before each post,
// statistics as print_report_lat. threads = 2: the
// passive side busy-polls in its own thread, as perftest's server process; 1: both sides in turn
// on one thread. order (two threads only): 0 perftest's order, 1 bench-rxe.ts's answer-first
// (the same work, the repost and the reaping moved off the critical path).
// Prints {t_typical_us, t_avg_us, t_min_us}: bench:rxe's C rows.
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 128
#define CQ_MOD 64

struct side {
  struct ibv_context* ctx;
  struct ibv_pd* pd;
  struct ibv_cq *scq, *rcq;
  struct ibv_qp* qp;
  struct ibv_mr* mr;
  char buf[4096];
  union ibv_gid gid;
  uint64_t sends;
  int cq_mod;  // every cq_mod-th send is signaled and its completion awaited
  int inline_send;
};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void open_side(struct side* s, const char* name) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(ibv_get_device_name(list[i]), name) == 0) s->ctx = ibv_open_device(list[i]);
  if (!s->ctx) die(name);
  s->pd = ibv_alloc_pd(s->ctx);
  s->scq = ibv_create_cq(s->ctx, 2 * DEPTH, NULL, NULL, 0);
  s->rcq = ibv_create_cq(s->ctx, 2 * DEPTH, NULL, NULL, 0);
  struct ibv_qp_init_attr ia = {.send_cq = s->scq, .recv_cq = s->rcq, .qp_type = IBV_QPT_RC, .sq_sig_all = 0};
  ia.cap = (struct ibv_qp_cap){
      .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 8};
  s->qp = ibv_create_qp(s->pd, &ia);
  s->mr = ibv_reg_mr(s->pd, s->buf, sizeof s->buf, IBV_ACCESS_LOCAL_WRITE);
  if (!s->pd || !s->scq || !s->rcq || !s->qp || !s->mr) die("setup");
  if (ibv_query_gid(s->ctx, 1, 0, &s->gid)) die("query_gid");  // index 0: link-local
  s->cq_mod = CQ_MOD;
  s->inline_send = 1;
}

static void connect_to(struct side* x, struct side* y) {
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qp_access_flags = IBV_ACCESS_LOCAL_WRITE};
  if (ibv_modify_qp(x->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = y->qp->qp_num;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = 1;
  a.ah_attr.grh.dgid = y->gid;
  a.ah_attr.grh.sgid_index = 0;
  a.ah_attr.grh.hop_limit = 64;
  if (ibv_modify_qp(x->qp, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    die("RTR");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 20;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  if (ibv_modify_qp(x->qp, &a,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                        IBV_QP_MAX_QP_RD_ATOMIC))
    die("RTS");
}

static void post_recv(struct side* s) {
  struct ibv_sge sge = {.addr = (uintptr_t)s->buf + 2048, .length = 64, .lkey = s->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = 0, .sg_list = &sge, .num_sge = 1}, *bad;
  if (ibv_post_recv(s->qp, &wr, &bad)) die("post_recv");
}

// Posts the SEND; returns whether it is signaled (then reap() must poll its completion).
static int post(struct side* s) {
  s->sends++;
  int signaled = s->sends % s->cq_mod == 0;
  struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = 8, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = s->sends,
                           .sg_list = &sge,
                           .num_sge = 1,
                           .opcode = IBV_WR_SEND,
                           .send_flags = (s->inline_send ? IBV_SEND_INLINE : 0) | (signaled ? IBV_SEND_SIGNALED : 0)},
                     *bad;
  if (ibv_post_send(s->qp, &wr, &bad)) die("post_send");
  return signaled;
}

static void reap(struct side* s) {
  struct ibv_wc wc;
  int got;
  while ((got = ibv_poll_cq(s->scq, 1, &wc)) == 0) {
  }
  if (got < 0 || wc.status != IBV_WC_SUCCESS) die("send completion");
}

static void send(struct side* s) {
  if (post(s)) reap(s);
}

static int wait_recv(struct side* s) {
  struct ibv_wc wc;
  int n = 0, got;
  while ((got = ibv_poll_cq(s->rcq, 1, &wc)) == 0) n++;
  if (got < 0 || wc.status != IBV_WC_SUCCESS) die("recv completion");
  return n;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double median(double* xs, int n) {
  qsort(xs, n, sizeof *xs, cmp);
  return xs[n / 2];
}

// perftest's print_report_lat: the round trips are the differences of consecutive
// timestamps; sorted, the largest LAT_MEASURE_TAIL (2) dropped; typical = median (mean of
// the middle two when even), average over the rest; one-way = round trip / 2.
// The same over one-way latencies d[0..count) (sorted here).
static void report_oneway(double* d, int count) {
  qsort(d, count, sizeof *d, cmp);
  int n = count > 2 ? count - 2 : count;
  double typical = n % 2 == 0 ? (d[n / 2] + d[n / 2 - 1]) / 2 : d[n / 2];
  double sum = 0;
  for (int k = 0; k < n; k++) sum += d[k];
  printf("{\"t_typical_us\":%.2f,\"t_avg_us\":%.2f,\"t_min_us\":%.2f}\n", typical, sum / n, d[0]);
}

static void report(const double* ts, int iters) {
  double* d = calloc(iters, sizeof(double));
  for (int k = 0; k < iters; k++) d[k] = (ts[k + 1] - ts[k]) / 2;
  report_oneway(d, iters);
  free(d);
}

// ib_send_lat's passive side (its server). order 0 (perftest's): wait for the SEND, repost
// the recv, answer, reap. order 1 (answer-first, as bench-rxe.ts): wait, answer, then repost
// and reap while the peer works.
struct passive_args {
  struct side* s;
  int total;
  int order;
};
static void* passive(void* p) {
  struct passive_args* a = p;
  for (int i = 0; i < a->total; i++) {
    wait_recv(a->s);
    if (a->order == 0) {
      post_recv(a->s);
      send(a->s);
    } else {
      int signaled = post(a->s);
      post_recv(a->s);
      if (signaled) reap(a->s);
    }
  }
  return NULL;
}

// bench-rxe.ts's latency loops in C: the same shape, the same statistics.
// order 1 (two threads only) is bench-rxe.ts's answer-first: the active side posts, reposts
// the recv the previous answer used and reaps while the peer works, then waits.
static int bench(struct side* a, struct side* b, int iters, int warmup, int threads, int order) {
  a->cq_mod = b->cq_mod = 1;
  a->inline_send = b->inline_send = 0;
  if (threads != 2) order = 0;
  double* ts = calloc(iters + 1, sizeof(double));
  pthread_t peer;
  struct passive_args pa = {.s = b, .total = warmup + iters, .order = order};
  if (threads == 2 && pthread_create(&peer, NULL, passive, &pa)) die("pthread_create");
  for (int i = 0; i < warmup + iters; i++) {
    if (i >= warmup) ts[i - warmup] = now_us();
    if (order == 1) {
      int signaled = post(a);
      if (i > 0) post_recv(a);
      if (signaled) reap(a);
      wait_recv(a);
      continue;
    }
    send(a);
    if (threads != 2) {
      wait_recv(b);
      post_recv(b);
      send(b);
    }
    wait_recv(a);
    post_recv(a);
  }
  ts[iters] = now_us();
  if (threads == 2) pthread_join(peer, NULL);
  report(ts, iters);
  free(ts);
  return 0;
}

int main(int argc, char** argv) {
  int bench_mode = argc > 1 && strcmp(argv[1], "--bench") == 0;
  int iters = argc > 1 + bench_mode ? atoi(argv[1 + bench_mode]) : 1000;
  FILE* out = !bench_mode && argc > 2 && strcmp(argv[2], "-") != 0 ? fopen(argv[2], "w") : stdout;
  if (!out) die(argv[2]);
  static struct side a, b;
  open_side(&a, "rxe0");
  open_side(&b, "rxe1");
  connect_to(&a, &b);
  connect_to(&b, &a);
  for (int i = 0; i < DEPTH; i++) {
    post_recv(&a);
    post_recv(&b);
  }
  if (bench_mode)
    return bench(&a, &b, iters, argc > 3 ? atoi(argv[3]) : 200, argc > 4 ? atoi(argv[4]) : 1,
                 argc > 5 ? atoi(argv[5]) : 0);
  // Per-call costs.
  double t0 = now_us();
  for (int i = 0; i < 20000; i++) now_us();
  double clock_us = (now_us() - t0) / 20000;
  struct ibv_wc wc;
  t0 = now_us();
  for (int i = 0; i < 20000; i++) ibv_poll_cq(a.rcq, 1, &wc);
  double poll_empty_us = (now_us() - t0) / 20000;
  // Phases of the serial ping-pong.
  double* ph[7];
  for (int k = 0; k < 7; k++) ph[k] = calloc(iters, sizeof(double));
  int polls_max = 0;
  // touch_pages > 0: before each round trip (outside the timed phases), read one byte of each
  // of that many pages spread over 256 MiB, as a large program's working set would: does a
  // verb cost more after it (the emulator's TLB and caches), although the verb is the same?
  int touch_pages = argc > 3 ? atoi(argv[3]) : 0;
  volatile unsigned char* big = touch_pages > 0 ? calloc(1, 256u << 20) : NULL;
  unsigned sink = 0;
  for (int i = 0; i < iters; i++) {
    double t[7];
    for (int k = 0; k < touch_pages; k++) sink += big[((size_t)k * 65537u * 4096u) % (256u << 20)];
    t[0] = now_us();
    send(&a);
    t[1] = now_us();
    int n = wait_recv(&b);
    t[2] = now_us();
    post_recv(&b);
    t[3] = now_us();
    send(&b);
    t[4] = now_us();
    n += wait_recv(&a);
    t[5] = now_us();
    post_recv(&a);
    t[6] = now_us();
    if (n > polls_max) polls_max = n;
    for (int k = 0; k < 6; k++) ph[k][i] = t[k + 1] - t[k];
    ph[6][i] = t[6] - t[0];
  }
  const char* names[7] = {"sendA", "waitB", "recvB", "sendB", "waitA", "recvA", "rtt"};
  fprintf(out, "{\n \"touch_pages\": %d,\n \"clock_gettime_us\": %.2f,\n \"poll_empty_us\": %.2f,\n", touch_pages,
          clock_us, poll_empty_us + 0 * sink);
  for (int k = 0; k < 7; k++)
    fprintf(out, " \"median_%s_us\": %.2f,\n", names[k], median(ph[k] + iters / 2, iters - iters / 2));
  fprintf(out, " \"max_polls_per_wait\": %d\n}\n", polls_max);
  return 0;
}
