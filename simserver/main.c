/* simserver: an OpenAI-compatible simulated inference server. This file takes
 * the flags from sim_opts (the options table), binds the port, and runs one worker in-process or
 * forks N workers that share the port through SO_REUSEPORT (the parent forwards SIGINT/SIGTERM and
 * waits for them). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rb_proc.h"
#include "sim_opts.h"
#include "rb_tok.h"
#include "sim_server.h"

/* A TCP socket bound with SO_REUSEPORT to host:port. Returns the fd or -errno. */
static int bind_socket(const char *host, int port, int *bound_port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    int family;
    if (strchr(host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) return -EINVAL;
        len = sizeof *a;
        family = AF_INET6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1) return -EINVAL;
        len = sizeof *a;
        family = AF_INET;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    getsockname(fd, (struct sockaddr *)&got, &gl);
    *bound_port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                           : ((struct sockaddr_in *)&got)->sin_port);
    return fd;
}

static void print_listening(const sim_config *cfg, int port)
{
    if (strchr(cfg->host, ':'))
        printf("listening http://[%s]:%d\n", cfg->host, port);
    else
        printf("listening http://%s:%d\n", cfg->host, port);
    fflush(stdout);
}

static volatile sig_atomic_t got_signal;
static void on_parent_signal(int sig)
{
    got_signal = sig;
}

/* A worker's body: listen on the shared port, say so, serve until SIGTERM. */
typedef struct worker_ctx {
    const sim_config *cfg;
    int parent_fd, ready_r, ready_w, port;
    sim_metrics *slots;
} worker_ctx;

static int worker_main(void *ctx, int i)
{
    worker_ctx *c = ctx;
    close(c->parent_fd);
    close(c->ready_r);
    int p2;
    int fd = bind_socket(c->cfg->host, c->port, &p2);
    if (fd < 0 || listen(fd, 4096) != 0) {
        fprintf(stderr, "simserver: worker %d: cannot listen on %s:%d: %s\n", i, c->cfg->host,
                c->port, strerror(fd < 0 ? -fd : errno));
        return 1;
    }
    char b = 1;
    if (write(c->ready_w, &b, 1) != 1) return 1;
    close(c->ready_w);
    return sim_server_run(c->cfg, fd, i, c->slots, c->cfg->workers);
}

static void worker_ended(void *ctx, int i, int st)
{
    (void)i;
    int *failed = ctx;
    if (!rb_proc_status_ok(st)) {
        if (!*failed) fprintf(stderr, "simserver: a worker ended abnormally (status %d)\n", st);
        *failed = 1;
    }
}

static int run_workers(const sim_config *cfg, int parent_fd, int port, sim_metrics *slots)
{
    int ready[2];
    if (pipe(ready) != 0) {
        perror("simserver: pipe");
        return 1;
    }
    rb_procs ps;
    if (rb_procs_init(&ps, cfg->workers)) {
        fprintf(stderr, "simserver: out of memory\n");
        return 1;
    }
    /* The workers keep their own SIGTERM handler (each drains its streams)
     * and die with this process (rb_proc.h says why the two programs
     * differ). */
    worker_ctx wc = {.cfg = cfg,
                     .parent_fd = parent_fd,
                     .ready_r = ready[0],
                     .ready_w = ready[1],
                     .port = port,
                     .slots = slots};
    int started = 0;
    for (int i = 0; i < cfg->workers; i++) {
        int rc = rb_procs_spawn(&ps, i, 0, worker_main, &wc);
        if (rc < 0) {
            fprintf(stderr, "simserver: fork: %s\n", strerror(-rc));
            break;
        }
        started++;
    }
    close(ready[1]);
    int n_ready = 0;
    char b;
    while (n_ready < started) {
        ssize_t r = read(ready[0], &b, 1);
        if (r == 1)
            n_ready++;
        else if (r < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    close(ready[0]);
    close(parent_fd);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_parent_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int failed = n_ready < cfg->workers;
    if (!failed)
        print_listening(cfg, port);
    else {
        fprintf(stderr, "simserver: only %d of %d workers started\n", n_ready, cfg->workers);
        rb_procs_signal(&ps, SIGTERM);
    }
    int forwarded = 0;
    while (ps.alive > 0) {
        if (got_signal && !forwarded) {
            forwarded = 1;
            rb_procs_signal(&ps, SIGTERM);
        }
        rb_procs_reap(&ps, 1, worker_ended, &failed); /* a signal ends the wait */
    }
    rb_procs_free(&ps);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    static sim_opts opts; /* cfg points into it: it outlives the workers */
    char err[512];
    int rc = sim_opts_defaults(&opts, err, sizeof err);
    if (rc == 0) rc = sim_opts_parse(&opts, argc - 1, argv + 1, err, sizeof err);
    if (rc == RB_OPTS_HELP) {
        char *usage = rb_opts_usage(&sim_opts_spec);
        if (!usage) return 1;
        fputs(usage, stdout);
        free(usage);
        return 0;
    }
    if (rc == RB_OPTS_VERSION) {
        printf("simserver %s\n", RHOBENCH_VERSION);
        return 0;
    }
    if (rc) {
        fprintf(stderr, "simserver: %s\n", err);
        return 2;
    }
    sim_config cfg = opts.cfg;
    if (opts.tokenizer[0]) {
        char why[1200];
        if (rb_tok_open(opts.tokenizer, &cfg.tok, why, sizeof why)) {
            fprintf(stderr, "simserver: --tokenizer: %s\n", why);
            return 2;
        }
    }

    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max; /* thousands of connections */
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    int port = 0;
    int fd = bind_socket(cfg.host, cfg.port, &port);
    if (fd == -EINVAL) {
        fprintf(stderr, "simserver: --host: must be a numeric IPv4 or IPv6 address, got '%s'\n",
                cfg.host);
        return 2;
    }
    if (fd < 0) {
        fprintf(stderr, "simserver: cannot bind %s:%d: %s\n", cfg.host, cfg.port, strerror(-fd));
        return 1;
    }
    size_t slots_len = sizeof(sim_metrics) * (size_t)cfg.workers;
    sim_metrics *slots =
        mmap(NULL, slots_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (slots == MAP_FAILED) {
        perror("simserver: mmap");
        return 1;
    }
    if (cfg.workers == 1) {
        if (listen(fd, 4096) != 0) {
            fprintf(stderr, "simserver: cannot listen on %s:%d: %s\n", cfg.host, port,
                    strerror(errno));
            return 1;
        }
        print_listening(&cfg, port);
        rc = sim_server_run(&cfg, fd, 0, slots, 1);
    } else {
        rc = run_workers(&cfg, fd, port, slots);
    }
    munmap(slots, slots_len);
    return rc;
}
