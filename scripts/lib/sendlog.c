/* sendlog: an LD_PRELOAD library that logs every write a process makes to a
 * socket, so that scripts/demo.sh can measure the arrival process its client
 * loop sees (the gaps between the server's deliveries) without changing the
 * server or the client. Loaded into simserver with RB_SENDLOG=FILE; each
 * write, writev, send or sendmsg to a socket appends one line
 *   t_ns bytes events
 * (CLOCK_MONOTONIC just before the call; bytes the call took; SSE data events
 * in those bytes: lines starting "data:"). One write(2) per line on an
 * O_APPEND descriptor, so a forked worker's lines never interleave. Without
 * RB_SENDLOG it only forwards. Built by scripts/demo.sh:
 *   cc -shared -fPIC -O2 -o sendlog.so scripts/lib/sendlog.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -2; /* -2: not opened yet; -1: off */

static int sendlog_fd(void)
{
    if (log_fd == -2) {
        const char *path = getenv("RB_SENDLOG");
        log_fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    }
    return log_fd;
}

static int is_socket(int fd)
{
    struct stat st;
    return fd > 2 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* SSE data events in p[0..n): "data:" at the start of p or after a '\n' (a
 * chunk's size line ends in "\r\n", so the first event of a chunk counts). */
static long events_in(const char *p, size_t n)
{
    long e = 0;
    for (size_t i = 0; i + 5 <= n; i++)
        if ((i == 0 || p[i - 1] == '\n') && memcmp(p + i, "data:", 5) == 0) e++;
    return e;
}

static void log_line(int64_t t_ns, ssize_t bytes, long events)
{
    if (bytes <= 0) return;
    char line[64];
    int len =
        snprintf(line, sizeof line, "%lld %lld %ld\n", (long long)t_ns, (long long)bytes, events);
    int saved = errno; /* the caller reads the forwarded call's errno */
    if (len > 0) (void)syscall(SYS_write, log_fd, line, (size_t)len);
    errno = saved;
}

/* The same over the first r bytes of iov[0..n) (a partial write's rest is
 * written, and counted, by a later call). */
static long events_iov(const struct iovec *iov, int n, ssize_t r)
{
    long e = 0;
    size_t left = r > 0 ? (size_t)r : 0;
    for (int i = 0; i < n && left > 0; i++) {
        size_t len = iov[i].iov_len < left ? iov[i].iov_len : left;
        e += events_in(iov[i].iov_base, len);
        left -= len;
    }
    return e;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (sendlog_fd() < 0 || !is_socket(fd)) return real(fd, buf, count);
    int64_t t = now_ns();
    ssize_t r = real(fd, buf, count);
    if (r > 0) log_line(t, r, events_in(buf, (size_t)r));
    return r;
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    if (sendlog_fd() < 0 || !is_socket(fd)) return real(fd, iov, iovcnt);
    int64_t t = now_ns();
    ssize_t r = real(fd, iov, iovcnt);
    log_line(t, r, events_iov(iov, iovcnt, r));
    return r;
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    static ssize_t (*real)(int, const void *, size_t, int);
    if (!real) real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    if (sendlog_fd() < 0 || !is_socket(fd)) return real(fd, buf, len, flags);
    int64_t t = now_ns();
    ssize_t r = real(fd, buf, len, flags);
    if (r > 0) log_line(t, r, events_in(buf, (size_t)r));
    return r;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    static ssize_t (*real)(int, const struct msghdr *, int);
    if (!real) real = (ssize_t(*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
    if (sendlog_fd() < 0 || !is_socket(fd)) return real(fd, msg, flags);
    int64_t t = now_ns();
    ssize_t r = real(fd, msg, flags);
    log_line(t, r, events_iov(msg->msg_iov, (int)msg->msg_iovlen, r));
    return r;
}
