/* cal_proc: spawning, waiting for and stopping calibrate's children, and the
 * handlers that make sure none outlives calibrate. */
#include "cal_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rb_clock.h"
#include "rb_file.h"

#define MAX_CHILDREN 8

static volatile sig_atomic_t g_interrupted;
static pid_t g_children[MAX_CHILDREN]; /* 0 = free; read by the signal handler */

static void registry_add(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (!g_children[i]) {
            g_children[i] = pid;
            return;
        }
}

static void registry_remove(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (g_children[i] == pid) g_children[i] = 0;
}

void cal_proc_kill_all(void)
{
    for (int i = 0; i < MAX_CHILDREN; i++) {
        pid_t p = g_children[i];
        if (p > 0) {
            kill(-p, SIGKILL);
            kill(p, SIGKILL);
        }
    }
}

static void on_signal(int sig)
{
    g_interrupted = sig;
    /* A polite stop first; cal_proc_wait escalates, and at exit the registry
     * is emptied with SIGKILL. */
    for (int i = 0; i < MAX_CHILDREN; i++) {
        pid_t p = g_children[i];
        if (p > 0) {
            kill(-p, SIGTERM);
            kill(p, SIGTERM);
        }
    }
}

static void at_exit(void)
{
    for (int i = 0; i < MAX_CHILDREN; i++) {
        pid_t p = g_children[i];
        if (p > 0) {
            cal_proc_stop(p, 1000000000LL);
        }
    }
}

void cal_proc_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    atexit(at_exit);
}

int cal_proc_interrupted(void)
{
    return g_interrupted;
}

int cal_proc_spawn(char *const argv[], const char *log_path, pid_t *pid)
{
    return cal_proc_spawn_on(argv, log_path, -1, 0, pid);
}

int cal_proc_spawn_on(char *const argv[], const char *log_path, int cpu, int rt_priority,
                      pid_t *pid)
{
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    pid_t parent = getpid();
    /* Block the stop signals across fork, so a child never runs our handler
     * and the registry entry exists before any signal is delivered. */
    sigset_t all, old;
    sigemptyset(&all);
    sigaddset(&all, SIGINT);
    sigaddset(&all, SIGTERM);
    sigaddset(&all, SIGHUP);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t p = fork();
    if (p < 0) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(fd);
        return -e;
    }
    if (p == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127); /* calibrate died before the death signal was armed */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (cpu >= 0 && cpu < CPU_SETSIZE) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            (void)sched_setaffinity(0, sizeof set, &set); /* best effort: the run goes on */
        }
        if (rt_priority > 0) {
            struct sched_param sp = {.sched_priority = rt_priority};
            (void)sched_setscheduler(0, SCHED_FIFO, &sp); /* kept across exec; best effort */
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], argv);
        dprintf(2, "calibrate: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(p, p); /* also from this side, so the group exists before any kill */
    registry_add(p);
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(fd);
    *pid = p;
    return 0;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    nanosleep(&ts, NULL);
}

static int decode(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 255;
}

void cal_proc_stop(pid_t pid, int64_t grace_ns)
{
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
        kill(-pid, SIGKILL); /* leftovers of its group, if any */
        registry_remove(pid);
        return;
    }
    kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
    int64_t until = rb_now_ns() + grace_ns;
    while (rb_now_ns() < until) {
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        sleep_ns(10000000);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    registry_remove(pid);
}

int cal_proc_wait(pid_t pid, int64_t timeout_ns)
{
    int64_t until = rb_now_ns() + timeout_ns;
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            registry_remove(pid);
            kill(-pid, SIGKILL); /* workers left behind by a crashed loadgen */
            return decode(status);
        }
        if (r < 0 && errno != EINTR) {
            registry_remove(pid);
            return -ECHILD;
        }
        if (g_interrupted) {
            cal_proc_stop(pid, 3000000000LL);
            return -EINTR;
        }
        if (rb_now_ns() >= until) {
            cal_proc_stop(pid, 3000000000LL);
            return -ETIMEDOUT;
        }
        sleep_ns(20000000);
    }
}

int cal_parse_listening(const char *line)
{
    const char *p = strstr(line, "listening http://");
    if (!p) return -EINVAL;
    p += strlen("listening http://");
    const char *colon = strrchr(p, ':');
    if (!colon) return -EINVAL;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || port < 1 || port > 65535 ||
        (*end && *end != '\n' && *end != '\r' && *end != '/' && *end != ' '))
        return -EINVAL;
    return (int)port;
}

int cal_proc_wait_listening(pid_t pid, const char *log_path, int64_t timeout_ns)
{
    int64_t until = rb_now_ns() + timeout_ns;
    for (;;) {
        char *text = NULL;
        size_t len = 0;
        if (rb_read_file(log_path, 1 << 20, &text, &len) == 0) {
            /* the simulator prints it first on stdout; stderr shares the log,
             * so every complete line is looked at */
            char *line = text, *nl;
            while ((nl = strchr(line, '\n'))) {
                *nl = '\0';
                int port = cal_parse_listening(line);
                if (port > 0) {
                    free(text);
                    return port;
                }
                line = nl + 1;
            }
            free(text);
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            registry_remove(pid);
            return -ECHILD;
        }
        if (g_interrupted) return -EINTR;
        if (rb_now_ns() >= until) return -ETIMEDOUT;
        sleep_ns(10000000);
    }
}

int cal_proc_sibling(const char *rel, char *out, size_t n)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0) return -errno;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    if ((size_t)snprintf(out, n, "%s/%s", self, rel) >= n) return -ENAMETOOLONG;
    return 0;
}

int cal_proc_pick_cpus(int *client, int *server)
{
    *client = *server = -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2) return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            if (*client < 0) *client = c;
            *server = c;
        }
    return 0;
}

int cal_proc_place(const double *idle, int n, const cpu_set_t *allowed, int k, int *sim_cpu,
                   cpu_set_t *workers)
{
    *sim_cpu = -1;
    CPU_ZERO(workers);
    if (k < 1 || CPU_COUNT(allowed) < k + 1) return -1;
    double least = INFINITY;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, allowed)) continue;
        double v = c < n && idle[c] == idle[c] ? idle[c] : 1.0;
        if (v < least) {
            least = v;
            *sim_cpu = c;
        }
    }
    CPU_OR(workers, workers, allowed);
    CPU_CLR(*sim_cpu, workers);
    return 0;
}
