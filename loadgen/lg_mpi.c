/* lg_mpi: the mpi back-end (see lg_mpi.h).
 *
 * The file is long for a stated reason: it is the one
 * place that calls MPI, and its parts (the clock sync, the survivors'
 * rendezvous, the exact exchange to rank 0, the lost-rank watch and the
 * live progress) share one communicator state, one timeout discipline and
 * each other's failure paths; what is pure (the snapshot of a rank's slots
 * and the lost arrivals) is lg_mpi_snap.c, and the build without MPI is the
 * stubs below. */

#include "lg_mpi.h"
#include "lg_mpi_snap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RHOBENCH_HAVE_MPI

int lg_mpi_available(void)
{
    return 0;
}
lg_mpi *lg_mpi_init(void)
{
    fprintf(stderr, "loadgen: --mpi: this build has no MPI (configure with -DRHOBENCH_MPI=ON)\n");
    return NULL;
}
int lg_mpi_rank(const lg_mpi *m)
{
    return 0;
}
int lg_mpi_size(const lg_mpi *m)
{
    return 1;
}
int lg_mpi_ranks_here(const lg_mpi *m)
{
    return 1;
}
int lg_mpi_max(lg_mpi *m, int v)
{
    return v;
}
void lg_mpi_bcast(lg_mpi *m, void *buf, size_t n) {}
void lg_mpi_sum_u64(lg_mpi *m, uint64_t *v, int n) {}
int64_t lg_mpi_start(lg_mpi *m, int64_t lead_ns)
{
    return 0;
}
int lg_mpi_collect(lg_mpi *m, const lg_plan *p, int lost, lg_mpi_fleet *f)
{
    return -ENOSYS;
}
void lg_mpi_reduce_blocks(lg_mpi *m, const lg_stage_stats *const *src, lg_stage_stats **dst, int n)
{
}
void lg_mpi_fleet_free(lg_mpi_fleet *f) {}
cJSON *lg_mpi_json(const lg_mpi *m, const lg_mpi_fleet *f, const lg_plan *p)
{
    return NULL;
}
void lg_mpi_watch(lg_mpi *m, int64_t now_ns) {}
int lg_mpi_progress(lg_mpi *m, const uint64_t *mine, int n, const unsigned char *is_max,
                    uint64_t *out, int64_t now_ns)
{
    return 0;
}
int lg_mpi_survivors(lg_mpi *m, int64_t deadline_ns)
{
    return 0;
}
long lg_mpi_local_pid(const lg_mpi *m, int r)
{
    return 0;
}
void lg_mpi_to_root_clock(lg_mpi *m, const lg_plan *p) {}
int64_t lg_mpi_t0_root(const lg_mpi *m)
{
    return 0;
}
void lg_mpi_set_certificate(lg_mpi *m, const char *note) {}
void lg_mpi_finish(lg_mpi *m) {}

#else

#include <mpi.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "rb_clock.h"
#include "rb_proc.h"

#define PINGS 16 /* round trips per rank; the shortest is kept */
/* Dispatch samples gathered at rank 0 for the arrival test, at most: each
 * rank sends its first LG_MPI_SAMPLES / N (all of its 50,000 up to 40
 * ranks, as the fork back-end keeps), 64 MB in all. */
#define LG_MPI_SAMPLES 2000000

typedef struct lg_clock_sample {
    int64_t offset_ns; /* the rank's clock minus rank 0's */
    int64_t rtt_ns;    /* the round trip of the sample kept */
} lg_clock_sample;

struct lg_mpi {
    int rank, size, here;
    char host[MPI_MAX_PROCESSOR_NAME];
    char (*hosts)[MPI_MAX_PROCESSOR_NAME]; /* rank 0: every rank's */
    int n_hosts;
    lg_clock_sample *start, *end; /* rank 0: per rank, before and after the run */
    int64_t *applied;             /* rank 0: per rank, its applied_ns */
    int64_t t0_root_ns;           /* the start instant in rank 0's clock */
    int64_t applied_ns;           /* this rank's clock minus rank 0's, as used: 0 on rank 0's
                                     host (one CLOCK_MONOTONIC), else the measured offset */
    int64_t merge_ns;             /* rank 0: the exchange's wall time */
    /* the ranks that reached the end: MPI_COMM_WORLD until lg_mpi_survivors,
     * then a communicator of the survivors only (rank 0 first) */
    MPI_Comm live;
    int n_live;
    int *alive;       /* [size]: 1 for a survivor (every rank knows) */
    int *live_rank;   /* [n_live]: the world rank of each of live's ranks */
    pid_t *pids;      /* rank 0: every rank's process */
    int *same_host;   /* rank 0: the rank runs on rank 0's host */
    int64_t *died_ns; /* rank 0: when rank 0 saw it gone (its clock; 0: not seen) */
    int64_t last_watch_ns;
    int broken;         /* rank 0 is gone: no MPI_Finalize (it would wait for it) */
    int converted;      /* this rank's times are in rank 0's clock */
    char cert[512];     /* this rank's certificate note */
    char (*certs)[512]; /* rank 0: every survivor's */
    /* live progress (lg_mpi_progress) */
    MPI_Request prog_req; /* this rank's send in flight (MPI_REQUEST_NULL: none) */
    uint64_t *prog_buf;   /* its counters, while it is in flight */
    uint64_t *prog_all;   /* rank 0: every rank's latest, prog_n each */
    int prog_n;
    int64_t last_prog_ns;
};

int lg_mpi_available(void)
{
    return 1;
}

lg_mpi *lg_mpi_init(void)
{
    int have = 0;
    MPI_Initialized(&have);
    if (!have && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "loadgen: --mpi: MPI_Init failed\n");
        return NULL;
    }
    lg_mpi *m = calloc(1, sizeof *m);
    if (!m) {
        fprintf(stderr, "loadgen: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
        return NULL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &m->here);
    MPI_Comm_free(&local);
    int len = 0;
    MPI_Get_processor_name(m->host, &len);
    if (m->rank == 0) {
        m->hosts = calloc((size_t)m->size, sizeof *m->hosts);
        m->start = calloc((size_t)m->size, sizeof *m->start);
        m->end = calloc((size_t)m->size, sizeof *m->end);
        m->applied = calloc((size_t)m->size, sizeof *m->applied);
        if (!m->hosts || !m->start || !m->end || !m->applied) {
            fprintf(stderr, "loadgen: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(m->host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, m->hosts ? m->hosts[0] : NULL,
               MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    m->live = MPI_COMM_WORLD;
    m->n_live = m->size;
    m->prog_req = MPI_REQUEST_NULL;
    m->alive = calloc((size_t)m->size, sizeof *m->alive);
    m->live_rank = calloc((size_t)m->size, sizeof *m->live_rank);
    if (m->rank == 0) {
        m->pids = calloc((size_t)m->size, sizeof *m->pids);
        m->same_host = calloc((size_t)m->size, sizeof *m->same_host);
        m->died_ns = calloc((size_t)m->size, sizeof *m->died_ns);
    }
    if (!m->alive || !m->live_rank ||
        (m->rank == 0 && (!m->pids || !m->same_host || !m->died_ns))) {
        fprintf(stderr, "loadgen: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < m->size; r++) {
        m->alive[r] = 1;
        m->live_rank[r] = r;
    }
    pid_t me = getpid();
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, m->pids, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    const char *rec = getenv("OMPI_MCA_orte_enable_recovery");
    if (m->rank == 0 && m->size > 1 && getenv("OMPI_COMM_WORLD_SIZE") && !(rec && atoi(rec)))
        fprintf(stderr, "loadgen: --mpi: without mpirun --enable-recovery, Open MPI ends every "
                        "rank soon after one is lost: the report then needs the others to "
                        "finish within its grace, else --mpi-salvage\n");
    if (m->rank == 0)
        for (int r = 0; r < m->size; r++) {
            m->same_host[r] = strcmp(m->hosts[r], m->hosts[0]) == 0;
            int seen = 0;
            for (int q = 0; q < r && !seen; q++)
                seen = strcmp(m->hosts[q], m->hosts[r]) == 0;
            m->n_hosts += !seen;
        }
    return m;
}

int lg_mpi_rank(const lg_mpi *m)
{
    return m->rank;
}

int lg_mpi_size(const lg_mpi *m)
{
    return m->size;
}

int lg_mpi_ranks_here(const lg_mpi *m)
{
    return m->here;
}

/* Completes a request without spinning: MPI_Test, then a 1 ms sleep. */
static int wait_until(MPI_Request *req, int64_t deadline_ns)
{
    int done = 0;
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done) return 0;
        if (deadline_ns && rb_now_ns() > deadline_ns) return -ETIMEDOUT;
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void wait_idle(MPI_Request *req)
{
    wait_until(req, 0);
}

int lg_mpi_max(lg_mpi *m, int v)
{
    int out = v;
    MPI_Request req;
    MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_MAX, m->live, &req);
    wait_idle(&req);
    return out;
}

void lg_mpi_bcast(lg_mpi *m, void *buf, size_t n)
{
    MPI_Request req;
    MPI_Ibcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    wait_idle(&req);
}

void lg_mpi_sum_u64(lg_mpi *m, uint64_t *v, int n)
{
    MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : v, m->rank == 0 ? v : NULL, n, MPI_UINT64_T, MPI_SUM,
               0, m->live);
}

/* Rank 0's side of the ping-pong with every other rank: the offset of the
 * round trip that was shortest (its error is within half of it). */
static void measure(lg_mpi *m, lg_clock_sample *out)
{
    if (m->rank == 0) {
        out[0] = (lg_clock_sample){0, 0};
        for (int r = 1; r < m->size; r++) {
            out[r] = (lg_clock_sample){0, INT64_MAX};
            if (!m->alive[r]) continue;
            for (int i = 0; i < PINGS; i++) {
                int64_t t1 = rb_now_ns(), tr = 0;
                MPI_Send(&t1, 1, MPI_INT64_T, r, 1, MPI_COMM_WORLD);
                MPI_Recv(&tr, 1, MPI_INT64_T, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int64_t t2 = rb_now_ns();
                if (t2 - t1 < out[r].rtt_ns)
                    out[r] = (lg_clock_sample){tr - t1 - (t2 - t1) / 2, t2 - t1};
            }
        }
    } else {
        for (int i = 0; i < PINGS; i++) {
            int64_t t1 = 0;
            MPI_Recv(&t1, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int64_t tr = rb_now_ns();
            MPI_Send(&tr, 1, MPI_INT64_T, 0, 2, MPI_COMM_WORLD);
        }
    }
}

int64_t lg_mpi_start(lg_mpi *m, int64_t lead_ns)
{
    lg_clock_sample mine;
    measure(m, m->start);
    int64_t t0 = m->rank == 0 ? rb_now_ns() + lead_ns : 0;
    MPI_Bcast(&t0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Scatter(m->start, (int)sizeof mine, MPI_BYTE, &mine, (int)sizeof mine, MPI_BYTE, 0,
                MPI_COMM_WORLD);
    char root_host[MPI_MAX_PROCESSOR_NAME];
    memcpy(root_host, m->host, sizeof root_host);
    MPI_Bcast(root_host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    m->t0_root_ns = t0;
    m->applied_ns = strcmp(root_host, m->host) == 0 ? 0 : mine.offset_ns;
    return t0 + m->applied_ns;
}

/* MPI's side of lg_stats_merge: inout = in + inout, block by block. */
static void merge_blocks(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    size_t bytes = lg_stats_block_bytes();
    for (int i = 0; i < *len; i++)
        lg_stats_merge((lg_stage_stats *)((char *)inout + (size_t)i * bytes),
                       (const lg_stage_stats *)((const char *)in + (size_t)i * bytes));
}

/* Whether a process of this host still runs (a zombie does not). */
static int pid_alive(pid_t pid)
{
    if (kill(pid, 0) != 0) return 0;
    char buf[256];
    const char *st = rb_proc_stat(pid, buf, sizeof buf);
    if (!st) return 0;
    return !(st[1] == 'Z' || st[1] == 'X');
}

void lg_mpi_watch(lg_mpi *m, int64_t now_ns)
{
    if (m->rank != 0 || now_ns - m->last_watch_ns < 100000000LL) return;
    m->last_watch_ns = now_ns;
    for (int r = 1; r < m->size; r++)
        if (m->same_host[r] && !m->died_ns[r] && !pid_alive(m->pids[r])) m->died_ns[r] = now_ns;
}

#define TAG_DONE 11
#define TAG_ALIVE 12
#define TAG_PROGRESS 14

/* Rank 0: takes every progress message that has arrived. */
static void progress_drain(lg_mpi *m)
{
    for (;;) {
        int flag = 0, count = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_PROGRESS, MPI_COMM_WORLD, &flag, &st);
        if (!flag) return;
        MPI_Get_count(&st, MPI_UINT64_T, &count);
        int r = st.MPI_SOURCE;
        if (m->prog_all && count == m->prog_n && r > 0 && r < m->size)
            MPI_Recv(m->prog_all + (size_t)r * (size_t)m->prog_n, m->prog_n, MPI_UINT64_T, r,
                     TAG_PROGRESS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else /* a size this rank did not expect: taken and dropped */
            MPI_Recv(NULL, 0, MPI_BYTE, r, TAG_PROGRESS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int lg_mpi_progress(lg_mpi *m, const uint64_t *mine, int n, const unsigned char *is_max,
                    uint64_t *out, int64_t now_ns)
{
    if (!m || n <= 0 || m->size < 2 || m->broken) {
        if (m && m->rank == 0 && n > 0) memcpy(out, mine, (size_t)n * sizeof *out);
        return m && m->rank == 0;
    }
    /* Rank 0 takes what arrived at every call and shows it four times a
     * second; the others send once a second. */
    if (now_ns - m->last_prog_ns < (m->rank == 0 ? 250000000LL : 1000000000LL)) {
        if (m->rank == 0 && m->prog_all) progress_drain(m);
        return 0;
    }
    if (!m->prog_n) {
        m->prog_n = n;
        m->prog_buf = calloc((size_t)n, sizeof *m->prog_buf);
        if (m->rank == 0) m->prog_all = calloc((size_t)n * (size_t)m->size, sizeof *m->prog_all);
        if (!m->prog_buf || (m->rank == 0 && !m->prog_all)) return 0;
    }
    if (n != m->prog_n) return 0;
    m->last_prog_ns = now_ns;
    if (m->rank != 0) {
        if (m->prog_req != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_Test(&m->prog_req, &done, MPI_STATUS_IGNORE);
            if (!done) return 0; /* the last one is still on its way: skip this one */
        }
        memcpy(m->prog_buf, mine, (size_t)n * sizeof *mine);
        MPI_Isend(m->prog_buf, n, MPI_UINT64_T, 0, TAG_PROGRESS, MPI_COMM_WORLD, &m->prog_req);
        return 0;
    }
    progress_drain(m);
    memcpy(m->prog_all, mine, (size_t)n * sizeof *mine);
    for (int i = 0; i < n; i++) {
        uint64_t v = 0;
        for (int r = 0; r < m->size; r++) {
            uint64_t x = m->prog_all[(size_t)r * (size_t)n + (size_t)i];
            v = is_max && is_max[i] ? (x > v ? x : v) : v + x;
        }
        out[i] = v;
    }
    return 1;
}

int lg_mpi_survivors(lg_mpi *m, int64_t deadline_ns)
{
    int n = m->size;
    if (m->rank != 0) {
        int one = 1;
        MPI_Request req[2];
        MPI_Isend(&one, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(m->alive, n, MPI_INT, 0, TAG_ALIVE, MPI_COMM_WORLD, &req[1]);
        /* rank 0 answers by its own deadline; past ours (later, and in this
         * rank's clock) it is taken as lost, and so is the run's report */
        int64_t mine = deadline_ns ? deadline_ns + m->applied_ns + 10000000000LL : 0;
        /* The last progress message goes before "done" (same peer and
         * communicator: rank 0 has it by the time it has "done"). */
        if (m->prog_req != MPI_REQUEST_NULL && wait_until(&m->prog_req, mine))
            MPI_Request_free(&m->prog_req);
        if (wait_until(&req[1], mine)) {
            fprintf(stderr, "loadgen: rank %d: no word from rank 0: no report\n", m->rank);
            m->broken = 1;
            return -ETIMEDOUT;
        }
        wait_idle(&req[0]);
    } else {
        /* Every rank says it is done; one that is gone from this host, or
         * silent past the deadline, is lost. */
        int *done = calloc((size_t)n, sizeof *done);
        if (!done) MPI_Abort(MPI_COMM_WORLD, 1);
        done[0] = 1;
        for (int left = n - 1; left > 0;) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_DONE, MPI_COMM_WORLD, &flag, &st);
            if (flag) {
                int x;
                MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                if (!done[st.MPI_SOURCE]) left--;
                done[st.MPI_SOURCE] = 1;
                continue;
            }
            int64_t now = rb_now_ns();
            m->last_watch_ns = 0;
            lg_mpi_watch(m, now);
            int gone = 0;
            for (int r = 1; r < n; r++)
                gone += !done[r] && m->died_ns[r];
            if (gone == left || (deadline_ns && now > deadline_ns)) break;
            struct timespec ts = {0, 2000000L};
            nanosleep(&ts, NULL);
        }
        for (int r = 0; r < n; r++)
            m->alive[r] = done[r];
        free(done);
        progress_drain(m); /* none is left unmatched at the end */
        for (int r = 1; r < n; r++)
            if (m->alive[r]) MPI_Send(m->alive, n, MPI_INT, r, TAG_ALIVE, MPI_COMM_WORLD);
    }
    m->n_live = 0;
    for (int r = 0; r < n; r++)
        if (m->alive[r]) m->live_rank[m->n_live++] = r;
    if (m->n_live == n) return 0;
    /* Collective over the survivors only: a lost rank takes no part. */
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, m->n_live, m->live_rank, &g);
    MPI_Comm sub;
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, 13, &sub);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    if (rc != MPI_SUCCESS) return -EIO;
    m->live = sub;
    return n - m->n_live;
}

void lg_mpi_reduce_blocks(lg_mpi *m, const lg_stage_stats *const *src, lg_stage_stats **dst, int n)
{
    MPI_Datatype block;
    MPI_Op op;
    MPI_Type_contiguous((int)lg_stats_block_bytes(), MPI_BYTE, &block);
    MPI_Type_commit(&block);
    MPI_Op_create(merge_blocks, 0 /* in rank order, as the fork merge */, &op);
    for (int s = 0; s < n; s++)
        MPI_Reduce(src[s], m->rank == 0 ? dst[s] : NULL, 1, block, op, 0, m->live);
    MPI_Op_free(&op);
    MPI_Type_free(&block);
}

void lg_mpi_fleet_free(lg_mpi_fleet *f)
{
    free(f->slot);
    free(f->head);
    free(f->slots);
    free(f->blocks);
    free(f->lost);
    free(f->lost_sig);
    lg_merged_free(&f->merged);
    memset(f, 0, sizeof *f);
}

static int fleet_alloc(lg_mpi_fleet *f, int k, int n_stages)
{
    memset(f, 0, sizeof *f);
    f->k = k;
    f->n_stages = n_stages;
    size_t kb = (size_t)k * (size_t)n_stages;
    f->slot = calloc((size_t)k, sizeof *f->slot);
    f->head = calloc(kb, sizeof *f->head);
    f->slots = calloc((size_t)k, sizeof *f->slots);
    f->blocks = calloc(kb, sizeof *f->blocks);
    f->lost = calloc((size_t)k, sizeof *f->lost);
    f->lost_sig = calloc((size_t)k, sizeof *f->lost_sig);
    if (!f->slot || !f->head || !f->slots || !f->blocks || !f->lost || !f->lost_sig) return -ENOMEM;
    for (int w = 0; w < k; w++)
        f->slots[w] = &f->slot[w];
    for (size_t i = 0; i < kb; i++)
        f->blocks[i] = &f->head[i];
    return lg_merged_alloc(&f->merged, n_stages);
}

static void shift(int64_t *t, int64_t by)
{
    if (*t) *t -= by;
}

/* This rank's absolute times in rank 0's clock (the run is over: in place). */
void lg_mpi_to_root_clock(lg_mpi *m, const lg_plan *p)
{
    int64_t d = m->applied_ns;
    int w = m->rank;
    if (!d || m->converted) return;
    m->converted = 1;
    lg_slot *sl = lg_plan_slot(p, w);
    shift(&sl->window_start_ns, d);
    shift(&sl->window_end_ns, d);
    for (int s = 0; s < p->n_stages; s++) {
        lg_stage_stats *b = lg_plan_stats(p, w, s);
        shift(&b->first_dispatch_ns, d);
        shift(&b->last_dispatch_ns, d);
        shift(&b->first_intended_ns, d);
        shift(&b->last_intended_ns, d);
        shift(&b->last_end_ns, d);
    }
    lg_dispatch_sample *x = lg_plan_sample(p, w);
    for (uint64_t i = 0; i < sl->n_sample; i++) {
        x[i].dispatch_ns -= d;
        x[i].intended_ns -= d;
    }
}

/* Gathers `each` bytes of every survivor to rank 0, placed by world rank
 * into out[size * each] (a lost rank's part left zero). */
static void gather_placed(lg_mpi *m, const void *mine, size_t each, void *out)
{
    char *tmp = m->rank == 0 ? calloc((size_t)m->n_live, each ? each : 1) : NULL;
    if (m->rank == 0 && !tmp) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(mine, (int)each, MPI_BYTE, tmp, (int)each, MPI_BYTE, 0, m->live);
    if (m->rank != 0) return;
    for (int i = 0; i < m->n_live; i++)
        memcpy((char *)out + (size_t)m->live_rank[i] * each, tmp + (size_t)i * each, each);
    free(tmp);
}

int lg_mpi_collect(lg_mpi *m, const lg_plan *p, int lost, lg_mpi_fleet *f)
{
    int root = m->rank == 0, k = m->size, ns = p->n_stages, w = m->rank, nl = m->n_live;
    int rc = 0;
    memset(f, 0, sizeof *f);
    int64_t t_begin = rb_now_ns();
    lg_mpi_to_root_clock(m, p);
    if (root && fleet_alloc(f, k, ns)) rc = -ENOMEM;
    rc = lg_mpi_max(m, rc ? 1 : 0) ? -ENOMEM : 0;
    if (rc) return rc;
    const lg_slot *mine = lg_plan_slot(p, w);
    gather_placed(m, mine, sizeof *mine, root ? f->slot : NULL);
    gather_placed(m, &lost, sizeof lost, root ? f->lost : NULL);
    if (root)
        for (int r = 0; r < k; r++)
            f->lost[r] |= !m->alive[r];
    /* The stage blocks' headers (the loop figures per worker) ... */
    lg_stage_stats *heads = calloc((size_t)ns, sizeof *heads);
    if (!heads) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int s = 0; s < ns; s++)
        memcpy(&heads[s], lg_plan_stats(p, w, s), sizeof heads[s]);
    gather_placed(m, heads, (size_t)ns * sizeof *heads, root ? f->head : NULL);
    free(heads);
    /* ... the dispatch samples of the ranks kept ... */
    uint64_t send = mine->n_sample, cap = LG_MPI_SAMPLES / (uint64_t)k;
    if (send > cap) send = cap > 0 ? cap : 1;
    int nbytes = lost ? 0 : (int)(send * sizeof(lg_dispatch_sample));
    int *counts = root ? calloc((size_t)nl, sizeof *counts) : NULL;
    int *displs = root ? calloc((size_t)nl, sizeof *displs) : NULL;
    if (root && (!counts || !displs)) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&nbytes, 1, MPI_INT, counts, 1, MPI_INT, 0, m->live);
    size_t total = 0;
    if (root)
        for (int i = 0; i < nl; i++) {
            displs[i] = (int)total;
            total += (size_t)counts[i];
        }
    char *all = root ? malloc(total ? total : 1) : NULL;
    if (root && !all) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gatherv(lg_plan_sample(p, w), nbytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, m->live);
    /* ... and the blocks themselves, reduced by their exact merge (a plain
     * MPI_SUM/MIN/MAX would not do: first times use 0 for "none"). A rank
     * whose worker failed adds an empty block; a lost one takes no part. */
    lg_stage_stats *empty = lost ? lg_stats_new() : NULL;
    const lg_stage_stats **src = calloc((size_t)ns, sizeof *src);
    if ((lost && !empty) || !src) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int s = 0; s < ns; s++)
        src[s] = lost ? empty : lg_plan_stats(p, w, s);
    lg_mpi_reduce_blocks(m, src, root ? f->merged.stages : NULL, ns);
    free(src);
    free(empty);
    if (root) {
        lg_merge_total(&f->merged);
        lg_merge_sorted_samples(&f->merged, (lg_dispatch_sample *)all,
                                total / sizeof(lg_dispatch_sample));
        m->merge_ns = rb_now_ns() - t_begin;
    } else {
        free(all);
    }
    free(counts);
    free(displs);
    int64_t applied = m->applied_ns;
    gather_placed(m, &applied, sizeof applied, root ? m->applied : NULL);
    if (root && !(m->certs = calloc((size_t)k, sizeof *m->certs))) MPI_Abort(MPI_COMM_WORLD, 1);
    gather_placed(m, m->cert, sizeof m->cert, root ? m->certs : NULL);
    measure(m, m->end);
    return 0;
}

void lg_mpi_set_certificate(lg_mpi *m, const char *note)
{
    snprintf(m->cert, sizeof m->cert, "%s", note);
}

int64_t lg_mpi_t0_root(const lg_mpi *m)
{
    return m->t0_root_ns;
}

long lg_mpi_local_pid(const lg_mpi *m, int r)
{
    return m->rank == 0 && m->same_host[r] ? (long)m->pids[r] : 0;
}

cJSON *lg_mpi_json(const lg_mpi *m, const lg_mpi_fleet *f, const lg_plan *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "ranks", m->size);
    cJSON_AddNumberToObject(o, "hosts", m->n_hosts);
    cJSON *cs = cJSON_AddArrayToObject(o, "clock_sync");
    for (int r = 0; r < m->size && cs; r++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "host", m->hosts[r]);
        cJSON_AddNumberToObject(e, "offset_ns", (double)m->start[r].offset_ns);
        cJSON_AddNumberToObject(e, "uncertainty_ns", (double)((m->start[r].rtt_ns + 1) / 2));
        if (m->end[r].rtt_ns != INT64_MAX) {
            cJSON_AddNumberToObject(e, "drift_ns",
                                    (double)(m->end[r].offset_ns - m->start[r].offset_ns));
            cJSON_AddNumberToObject(e, "drift_uncertainty_ns",
                                    (double)((m->start[r].rtt_ns + m->end[r].rtt_ns) / 2));
        } else { /* lost before the second measurement */
            cJSON_AddNullToObject(e, "drift_ns");
            cJSON_AddNullToObject(e, "drift_uncertainty_ns");
        }
        cJSON_AddBoolToObject(e, "same_clock_as_rank0", r == 0 || m->applied[r] == 0);
        /* when its send window opened, after the common start (rank 0's
         * clock: the slots were converted before the exchange) */
        const lg_slot *sl = f->slots[r];
        if (sl->window_start_ns)
            cJSON_AddNumberToObject(e, "start_late_ns",
                                    (double)(sl->window_start_ns - m->t0_root_ns));
        cJSON_AddItemToArray(cs, e);
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int r = 0; r < m->size; r++) {
        const lg_slot *sl = f->slots[r];
        if (f->lost[r] || !sl->window_start_ns) continue;
        int64_t t = sl->window_start_ns;
        if (t < lo) lo = t;
        if (t > hi) hi = t;
    }
    cJSON_AddNumberToObject(o, "start_skew_ns", hi >= lo ? (double)(hi - lo) : 0);
    cJSON_AddNumberToObject(o, "merge_ns", (double)m->merge_ns);
    /* Each host checked its own ranks against its own certificate. */
    cJSON *ct = cJSON_AddArrayToObject(o, "certificates");
    for (int r = 0; r < m->size && ct; r++) {
        int first = 1, ranks = 0;
        for (int q = 0; q < m->size; q++) {
            if (strcmp(m->hosts[q], m->hosts[r]) != 0) continue;
            if (q < r) first = 0;
            ranks++;
        }
        if (!first) continue;
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddStringToObject(e, "host", m->hosts[r]);
        cJSON_AddNumberToObject(e, "ranks", ranks);
        if (m->certs && m->certs[r][0])
            cJSON_AddStringToObject(e, "certificate", m->certs[r]);
        else
            cJSON_AddNullToObject(e, "certificate");
        cJSON_AddItemToArray(ct, e);
    }
    cJSON *lr = cJSON_AddArrayToObject(o, "lost_ranks");
    cJSON *la = cJSON_AddArrayToObject(o, "lost_arrivals");
    for (int r = 0; r < m->size && lr && la; r++) {
        if (!f->lost[r]) continue;
        cJSON_AddItemToArray(lr, cJSON_CreateNumber(r));
        cJSON_AddItemToArray(la, lg_mpi_lost_arrivals(p, r, m->size, m->t0_root_ns, m->died_ns[r]));
    }
    return o;
}

void lg_mpi_finish(lg_mpi *m)
{
    int broken = m && m->broken;
    if (m) {
        free(m->hosts);
        free(m->start);
        free(m->end);
        free(m->applied);
        free(m->alive);
        free(m->live_rank);
        free(m->pids);
        free(m->same_host);
        free(m->died_ns);
        free(m->certs);
        free(m->prog_buf);
        free(m->prog_all);
        if (m->live != MPI_COMM_WORLD && !m->broken) MPI_Comm_free(&m->live);
        free(m);
    }
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && !broken) MPI_Finalize();
}

#endif
