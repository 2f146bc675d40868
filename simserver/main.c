/* simserver: an OpenAI-compatible simulated inference server. This file reads
 * the flags, binds the port, and runs one worker in-process or forks N
 * workers that share the port through SO_REUSEPORT (the parent forwards
 * SIGINT/SIGTERM and waits for them). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
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

#include "rb_units.h"
#include "sim_server.h"

static const char usage_text[] =
    "Usage: simserver [options]\n"
    "An OpenAI-compatible simulated LLM inference server (see simserver/README.md).\n"
    "\n"
    "Server:\n"
    "  --host ADDR                    numeric listen address, or localhost (default 127.0.0.1)\n"
    "  --port N                       port, 0 = any free port (default 8000); the first\n"
    "                                 line on stdout is 'listening http://HOST:PORT'\n"
    "  --workers N                    worker processes sharing the port (default 1)\n"
    "  --model NAME                   served model name (default sim-model)\n"
    "  --served-model-name A[,B...]   names accepted in 'model' (repeatable); the first\n"
    "                                 is the default and the metrics label\n"
    "  --mode random|echo             output text: vocabulary words, or the prompt's\n"
    "                                 words in order (default random)\n"
    "  --seed N                       seed of the jitter and fault draws (default 0)\n"
    "Latency model (durations: 500us, 20ms, 2s; a plain number is ms; all default 0):\n"
    "  --time-to-first-token D        fixed TTFT (overrides the prefill terms)\n"
    "  --time-to-first-token-std-dev D  Gaussian jitter of the TTFT\n"
    "  --prefill-overhead D           TTFT = overhead + per-token * uncached prompt tokens\n"
    "  --prefill-time-per-token D\n"
    "  --inter-token-latency D        time between output tokens\n"
    "  --inter-token-latency-std-dev D  Gaussian jitter of the ITL\n"
    "  --max-num-seqs N               running slots, 0 = unlimited (default 0)\n"
    "  --max-waiting-queue-length N   waiting requests before 429, 0 = unlimited\n"
    "                                 (default 1000)\n"
    "  --time-factor-under-load F     ITL and TTFT scale from 1x (one running) to Fx\n"
    "                                 (max-num-seqs running) (default 1)\n"
    "Prefix cache:\n"
    "  --enable-prefix-caching[=BOOL] on by default; --no-enable-prefix-caching\n"
    "  --block-size N                 tokens per block (default 16)\n"
    "  --prefix-cache-blocks N        capacity in blocks, LRU (default 16384)\n"
    "Faults:\n"
    "  --failure-injection-rate P     percent of requests that fail (default 0)\n"
    "  --failure-types LIST           comma list of rate_limit, server_error, unavailable,\n"
    "                                 invalid_request, invalid_api_key, connection_reset,\n"
    "                                 midstream_drop, malformed_chunk, stall (default all)\n"
    "                                 (the header 'X-Sim-Fail: TYPE' forces one)\n"
    "Limits:\n"
    "  --max-model-len N              prompt + max_tokens limit (default 32768)\n"
    "  --max-body SIZE                request body limit, 413 past it (default 1M)\n"
    "  --idle-timeout D               cut idle or slow clients (default 60s)\n"
    "  --max-write-queue SIZE         drop a client with this much unsent (default 4M)\n"
    "  --help, --version\n";

enum {
    OPT_HOST = 1000,
    OPT_PORT,
    OPT_WORKERS,
    OPT_MODEL,
    OPT_SERVED,
    OPT_MODE,
    OPT_SEED,
    OPT_TTFT,
    OPT_TTFT_SD,
    OPT_PREFILL_OVERHEAD,
    OPT_PREFILL_PER_TOKEN,
    OPT_ITL,
    OPT_ITL_SD,
    OPT_MAX_NUM_SEQS,
    OPT_MAX_WAITING,
    OPT_LOAD_FACTOR,
    OPT_PREFIX_ON,
    OPT_PREFIX_OFF,
    OPT_BLOCK_SIZE,
    OPT_CACHE_BLOCKS,
    OPT_FAIL_RATE,
    OPT_FAIL_TYPES,
    OPT_MAX_MODEL_LEN,
    OPT_MAX_BODY,
    OPT_IDLE,
    OPT_MAX_WRITE_QUEUE,
    OPT_HELP,
    OPT_VERSION,
};

static const struct option options[] = {
    {"host", required_argument, 0, OPT_HOST},
    {"port", required_argument, 0, OPT_PORT},
    {"workers", required_argument, 0, OPT_WORKERS},
    {"model", required_argument, 0, OPT_MODEL},
    {"served-model-name", required_argument, 0, OPT_SERVED},
    {"mode", required_argument, 0, OPT_MODE},
    {"seed", required_argument, 0, OPT_SEED},
    {"time-to-first-token", required_argument, 0, OPT_TTFT},
    {"time-to-first-token-std-dev", required_argument, 0, OPT_TTFT_SD},
    {"prefill-overhead", required_argument, 0, OPT_PREFILL_OVERHEAD},
    {"prefill-time-per-token", required_argument, 0, OPT_PREFILL_PER_TOKEN},
    {"inter-token-latency", required_argument, 0, OPT_ITL},
    {"inter-token-latency-std-dev", required_argument, 0, OPT_ITL_SD},
    {"max-num-seqs", required_argument, 0, OPT_MAX_NUM_SEQS},
    {"max-waiting-queue-length", required_argument, 0, OPT_MAX_WAITING},
    {"time-factor-under-load", required_argument, 0, OPT_LOAD_FACTOR},
    {"enable-prefix-caching", optional_argument, 0, OPT_PREFIX_ON},
    {"no-enable-prefix-caching", no_argument, 0, OPT_PREFIX_OFF},
    {"block-size", required_argument, 0, OPT_BLOCK_SIZE},
    {"prefix-cache-blocks", required_argument, 0, OPT_CACHE_BLOCKS},
    {"failure-injection-rate", required_argument, 0, OPT_FAIL_RATE},
    {"failure-types", required_argument, 0, OPT_FAIL_TYPES},
    {"max-model-len", required_argument, 0, OPT_MAX_MODEL_LEN},
    {"max-body", required_argument, 0, OPT_MAX_BODY},
    {"idle-timeout", required_argument, 0, OPT_IDLE},
    {"max-write-queue", required_argument, 0, OPT_MAX_WRITE_QUEUE},
    {"help", no_argument, 0, OPT_HELP},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0},
};

static int bad(const char *flag, const char *value, const char *why)
{
    fprintf(stderr, "simserver: --%s: %s, got '%s'\n", flag, why, value ? value : "");
    return 2;
}

static int parse_dur(const char *flag, const char *v, int64_t *out)
{
    return rb_parse_duration_ns(v, out)
               ? bad(flag, v, "must be a duration >= 0 such as 500us, 20ms or 2s")
               : 0;
}

static int parse_int(const char *flag, const char *v, int64_t min, int64_t max, int64_t *out)
{
    if (rb_parse_i64(v, min, max, out) == 0) return 0;
    char why[96];
    snprintf(why, sizeof why, "must be an integer in [%lld, %lld]", (long long)min, (long long)max);
    return bad(flag, v, why);
}

static int valid_name(const char *s)
{
    if (!*s || strlen(s) >= 128) return 0;
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) return 0;
    return 1;
}

static char *served_store[SIM_MAX_MODELS];

static int add_served(sim_config *cfg, const char *list)
{
    const char *p = list;
    do {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *name = strndup(p, n);
        if (!name) return 1;
        if (!valid_name(name) || cfg->n_served >= SIM_MAX_MODELS) {
            int rc = bad("served-model-name", list,
                         "names must be 1-127 plain characters, at most 16 of them");
            free(name);
            return rc;
        }
        served_store[cfg->n_served] = name;
        cfg->served[cfg->n_served++] = name;
        p = e ? e + 1 : p + n;
    } while (*p);
    return 0;
}

static int parse_flags(int argc, char **argv, sim_config *cfg)
{
    const char *model = "sim-model";
    int64_t v;
    int opt, rc = 0;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1 && rc == 0) {
        const char *a = optarg;
        switch (opt) {
        case OPT_HOST:
            cfg->host = strcmp(a, "localhost") == 0 ? "127.0.0.1" : a;
            break;
        case OPT_PORT:
            rc = parse_int("port", a, 0, 65535, &v);
            cfg->port = (int)v;
            break;
        case OPT_WORKERS:
            rc = parse_int("workers", a, 1, 256, &v);
            cfg->workers = (int)v;
            break;
        case OPT_MODEL:
            if (!valid_name(a)) rc = bad("model", a, "must be 1-127 plain characters");
            model = a;
            break;
        case OPT_SERVED:
            rc = add_served(cfg, a);
            break;
        case OPT_MODE:
            if (strcmp(a, "random") == 0)
                cfg->mode = SIM_MODE_RANDOM;
            else if (strcmp(a, "echo") == 0)
                cfg->mode = SIM_MODE_ECHO;
            else
                rc = bad("mode", a, "must be random or echo");
            break;
        case OPT_SEED:
            rc = parse_int("seed", a, 0, INT64_MAX, &v);
            cfg->seed = (uint64_t)v;
            break;
        case OPT_TTFT:
            rc = parse_dur("time-to-first-token", a, &cfg->lat.ttft_ns);
            break;
        case OPT_TTFT_SD:
            rc = parse_dur("time-to-first-token-std-dev", a, &cfg->lat.ttft_sd_ns);
            break;
        case OPT_PREFILL_OVERHEAD:
            rc = parse_dur("prefill-overhead", a, &cfg->lat.prefill_overhead_ns);
            break;
        case OPT_PREFILL_PER_TOKEN:
            rc = parse_dur("prefill-time-per-token", a, &cfg->lat.prefill_per_token_ns);
            break;
        case OPT_ITL:
            rc = parse_dur("inter-token-latency", a, &cfg->lat.itl_ns);
            break;
        case OPT_ITL_SD:
            rc = parse_dur("inter-token-latency-std-dev", a, &cfg->lat.itl_sd_ns);
            break;
        case OPT_MAX_NUM_SEQS:
            rc = parse_int("max-num-seqs", a, 0, 1000000, &cfg->lat.max_num_seqs);
            break;
        case OPT_MAX_WAITING:
            rc = parse_int("max-waiting-queue-length", a, 0, 100000000,
                           &cfg->max_waiting_queue_length);
            break;
        case OPT_LOAD_FACTOR:
            if (rb_parse_double(a, 1.0, 1e6, &cfg->lat.time_factor_under_load))
                rc = bad("time-factor-under-load", a, "must be a number >= 1");
            break;
        case OPT_PREFIX_ON:
            if (!a || strcmp(a, "true") == 0 || strcmp(a, "1") == 0)
                cfg->enable_prefix_caching = 1;
            else if (strcmp(a, "false") == 0 || strcmp(a, "0") == 0)
                cfg->enable_prefix_caching = 0;
            else
                rc = bad("enable-prefix-caching", a, "must be true or false");
            break;
        case OPT_PREFIX_OFF:
            cfg->enable_prefix_caching = 0;
            break;
        case OPT_BLOCK_SIZE:
            rc = parse_int("block-size", a, 1, 65536, &v);
            cfg->block_size = (int)v;
            break;
        case OPT_CACHE_BLOCKS:
            rc = parse_int("prefix-cache-blocks", a, 0, 1 << 26, &cfg->prefix_cache_blocks);
            break;
        case OPT_FAIL_RATE:
            if (rb_parse_double(a, 0.0, 100.0, &cfg->failure_rate_pct))
                rc = bad("failure-injection-rate", a, "must be a percentage in [0, 100]");
            break;
        case OPT_FAIL_TYPES: {
            char badname[64];
            if (sim_fault_parse_list(a, &cfg->failure_mask, badname, sizeof badname)) {
                char why[400];
                snprintf(why, sizeof why,
                         "unknown fault type '%s' (known: rate_limit, server_error, unavailable, "
                         "invalid_request, invalid_api_key, connection_reset, midstream_drop, "
                         "malformed_chunk, "
                         "stall, all)",
                         badname);
                rc = bad("failure-types", a, why);
            }
            break;
        }
        case OPT_MAX_MODEL_LEN:
            rc = parse_int("max-model-len", a, 1, INT32_MAX, &cfg->max_model_len);
            break;
        case OPT_MAX_BODY:
            if (rb_parse_size(a, &cfg->max_body_bytes) || cfg->max_body_bytes < 1 ||
                cfg->max_body_bytes > (1ULL << 30))
                rc = bad("max-body", a, "must be a size between 1 and 1G such as 64k or 1M");
            break;
        case OPT_IDLE:
            rc = parse_dur("idle-timeout", a, &cfg->idle_timeout_ns);
            if (!rc && cfg->idle_timeout_ns < 1000000)
                rc = bad("idle-timeout", a, "must be at least 1ms");
            break;
        case OPT_MAX_WRITE_QUEUE:
            if (rb_parse_size(a, &cfg->max_write_queue_bytes) || cfg->max_write_queue_bytes < 4096)
                rc = bad("max-write-queue", a, "must be a size of at least 4k");
            break;
        case OPT_HELP:
            fputs(usage_text, stdout);
            exit(0);
        case OPT_VERSION:
            printf("simserver %s\n", RHOBENCH_VERSION);
            exit(0);
        default:
            fprintf(stderr, "simserver: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (rc) return rc;
    if (optind < argc) {
        fprintf(stderr, "simserver: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (cfg->n_served == 0) {
        cfg->served[0] = model;
        cfg->n_served = 1;
    }
    return 0;
}

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

static int run_workers(const sim_config *cfg, int parent_fd, int port, sim_metrics *slots)
{
    int ready[2];
    if (pipe(ready) != 0) {
        perror("simserver: pipe");
        return 1;
    }
    pid_t *pids = calloc((size_t)cfg->workers, sizeof *pids);
    int started = 0;
    for (int i = 0; i < cfg->workers; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("simserver: fork");
            break;
        }
        if (pid == 0) {
            close(parent_fd);
            close(ready[0]);
            int p2;
            int fd = bind_socket(cfg->host, port, &p2);
            if (fd < 0 || listen(fd, 4096) != 0) {
                fprintf(stderr, "simserver: worker %d: cannot listen on %s:%d: %s\n", i, cfg->host,
                        port, strerror(fd < 0 ? -fd : errno));
                _exit(1);
            }
            char b = 1;
            if (write(ready[1], &b, 1) != 1) _exit(1);
            close(ready[1]);
            exit(sim_server_run(cfg, fd, i, slots,
                                cfg->workers)); /* exit, not _exit: LSan runs at exit */
        }
        pids[started++] = pid;
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
        for (int i = 0; i < started; i++)
            kill(pids[i], SIGTERM);
    }
    int forwarded = 0, alive = started;
    while (alive > 0) {
        if (got_signal && !forwarded) {
            forwarded = 1;
            for (int i = 0; i < started; i++)
                if (pids[i] > 0) kill(pids[i], SIGTERM);
        }
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < started; i++)
            if (pids[i] == pid) pids[i] = 0;
        alive--;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            if (!failed) fprintf(stderr, "simserver: a worker ended abnormally (status %d)\n", st);
            failed = 1;
        }
    }
    free(pids);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    sim_config cfg = {
        .host = "127.0.0.1",
        .port = 8000,
        .workers = 1,
        .mode = SIM_MODE_RANDOM,
        .seed = 0,
        .lat = {.time_factor_under_load = 1.0},
        .max_waiting_queue_length = 1000,
        .block_size = 16,
        .prefix_cache_blocks = 16384,
        .enable_prefix_caching = 1,
        .failure_rate_pct = 0,
        .failure_mask = ((1u << SIM_FAULT_COUNT) - 1) & ~1u,
        .max_model_len = 32768,
        .max_body_bytes = 1 << 20,
        .max_header_bytes = 64 << 10,
        .idle_timeout_ns = 60LL * 1000000000LL,
        .max_write_queue_bytes = 4 << 20,
        .shutdown_grace_ns = 2LL * 1000000000LL,
    };
    int rc = parse_flags(argc, argv, &cfg);
    if (rc) return rc;

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
    for (int i = 0; i < SIM_MAX_MODELS; i++)
        free(served_store[i]);
    return rc;
}
