/* rb_file: see rb_file.h. */
#include "rb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rb_file_strerror(int rc)
{
    if (rc == -RB_ENOTREG) return "not a regular file (a FIFO, device or socket)";
    if (rc == -RB_ELINK) return "a symbolic or hard link (refused: never written through)";
    return strerror(rc < 0 ? -rc : rc);
}

int rb_afile_open(rb_afile *f, const char *path)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path) return -ENAMETOOLONG;
    strcpy(f->path, path);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    /* O_EXCL: a stale temporary of a dead process with the same pid, or a
     * name someone planted, is never written through. */
    int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EEXIST && unlink(f->tmp) == 0)
        fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return -errno;
    f->fp = fdopen(fd, "w");
    if (!f->fp) {
        int e = errno;
        close(fd);
        unlink(f->tmp);
        return -e;
    }
    return 0;
}

int rb_afile_commit_to(rb_afile *f, const char *path)
{
    if (!f->fp) return -EBADF;
    int rc = 0;
    if (fflush(f->fp) != 0) rc = -errno;
    /* A buffered write that failed earlier leaves only the stream's error
     * flag: a later successful flush does not bring the data back. */
    if (rc == 0 && ferror(f->fp)) rc = -EIO;
    if (rc == 0 && fsync(fileno(f->fp)) != 0 && errno != EINVAL) rc = -errno;
    if (fclose(f->fp) != 0 && rc == 0) rc = -errno;
    f->fp = NULL;
    if (rc == 0 && rename(f->tmp, path) != 0) rc = -errno;
    if (rc != 0) unlink(f->tmp);
    return rc;
}

int rb_afile_commit(rb_afile *f)
{
    return rb_afile_commit_to(f, f->path);
}

void rb_afile_abort(rb_afile *f)
{
    if (f->fp) fclose(f->fp);
    f->fp = NULL;
    unlink(f->tmp);
}

int rb_write_file_atomic(const char *path, const void *buf, size_t len)
{
    rb_afile f;
    int rc = rb_afile_open(&f, path);
    if (rc) return rc;
    rb_recfile r;
    rc = rb_rec_init(&r, fileno(f.fp), 0);
    if (rc == 0) {
        rb_rec_add(&r, buf, len);
        rb_rec_flush(&r);
        rc = r.err;
        rb_rec_free(&r);
    }
    if (rc) {
        rb_afile_abort(&f);
        return rc;
    }
    return rb_afile_commit(&f);
}

/* ---- records ---------------------------------------------------------- */

int rb_rec_init(rb_recfile *f, int fd, size_t cap)
{
    memset(f, 0, sizeof *f);
    f->fd = fd;
    f->cap = cap;
    off_t end = lseek(fd, 0, SEEK_END); /* records go after what is there */
    f->end = end > 0 ? (int64_t)end : 0;
    if (cap) {
        f->buf = malloc(cap);
        if (!f->buf) return -ENOMEM;
    }
    return 0;
}

/* Writes n bytes holding `records` whole records at f->end; on failure cuts
 * the file back to f->end and counts them lost. */
static int rec_write(rb_recfile *f, const char *p, size_t n, uint64_t records)
{
    size_t done = 0;
    int rc = 0;
    while (done < n) {
        ssize_t w = pwrite(f->fd, p + done, n - done, (off_t)(f->end + (int64_t)done));
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        rc = w < 0 ? -errno : -ENOSPC; /* 0 bytes written: no room */
        break;
    }
    if (rc) {
        if (done && ftruncate(f->fd, (off_t)f->end) != 0) {
            /* Cannot cut the half record: later records go after it, and
             * the reader's line split skips it. */
            f->end += (int64_t)done;
        }
        f->lost += records;
        if (!f->err) f->err = rc;
        return rc;
    }
    f->end += (int64_t)n;
    f->written += records;
    return 0;
}

int rb_rec_flush(rb_recfile *f)
{
    if (!f->len) return 0;
    int rc = rec_write(f, f->buf, f->len, f->pending);
    f->len = 0;
    f->pending = 0;
    return rc;
}

int rb_rec_add(rb_recfile *f, const void *rec, size_t len)
{
    int rc = 0;
    if (f->len + len > f->cap) rc = rb_rec_flush(f);
    if (len > f->cap || !f->buf) {
        int r2 = rec_write(f, rec, len, 1);
        return rc ? rc : r2;
    }
    memcpy(f->buf + f->len, rec, len);
    f->len += len;
    f->pending++;
    return rc;
}

void rb_rec_free(rb_recfile *f)
{
    free(f->buf);
    f->buf = NULL;
    f->len = f->cap = 0;
    f->pending = 0;
}

/* ---- directories and locks -------------------------------------------- */

static int mkdir_p(const char *dir)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return -ENAMETOOLONG;
    memcpy(buf, dir, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -errno;
    return 0;
}

int rb_dir_check_writable(const char *dir)
{
    int rc = mkdir_p(dir);
    if (rc) return rc;
    struct stat st;
    if (stat(dir, &st) != 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.rb-probe.%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    close(fd);
    unlink(probe);
    return 0;
}

int rb_lock_take(const char *path, long *holder)
{
    char lp[4200];
    if ((size_t)snprintf(lp, sizeof lp, "%s.lock", path) >= sizeof lp) return -ENAMETOOLONG;
    if (holder) *holder = 0;
    /* A holder that releases removes the file: a lock taken on the removed
     * file would be no lock, so it is taken again on the new one. */
    for (int tries = 0; tries < 100; tries++) {
        /* O_NOFOLLOW: a link planted at the lock's name is refused (ELOOP),
         * never followed to the file it names; O_NONBLOCK: nor does a FIFO
         * there hold the run. Only a regular file of one link is a lock:
         * anything else (a hard link to another file) would be truncated. */
        int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (fd < 0) return errno == ELOOP ? -RB_ELINK : -errno;
        struct stat a, b;
        if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode) || a.st_nlink != 1) {
            int e = fstat(fd, &a) != 0 ? -errno : S_ISREG(a.st_mode) ? -RB_ELINK : -RB_ENOTREG;
            close(fd);
            return e;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            if (holder) {
                char b[32] = "";
                ssize_t n = pread(fd, b, sizeof b - 1, 0);
                if (n > 0) *holder = strtol(b, NULL, 10);
            }
            close(fd);
            return e == EWOULDBLOCK ? -EWOULDBLOCK : -e;
        }
        if (lstat(lp, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            char pid[32];
            int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n) {
                /* the pid is only a courtesy to the refused */
            }
            return fd;
        }
        close(fd);
    }
    return -EAGAIN;
}

void rb_lock_release(const char *path, int fd)
{
    if (fd < 0) return;
    char lp[4200];
    snprintf(lp, sizeof lp, "%s.lock", path);
    unlink(lp);
    close(fd);
}

/* ---- reading ---------------------------------------------------------- */

int rb_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -RB_ENOTREG;
    }
    if ((uint64_t)st.st_size > (uint64_t)max_bytes) {
        close(fd);
        return -EFBIG;
    }
    /* Sized by the file; a file that grows while read is cut at max_bytes + 1
     * and refused. */
    size_t cap = (size_t)st.st_size + 1;
    if (cap < 4096) cap = 4096;
    if (cap > max_bytes + 2) cap = max_bytes + 2;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    size_t len = 0;
    int rc = 0;
    for (;;) {
        if (len + 1 >= cap) {
            if (len > max_bytes) break;
            size_t nc = cap * 2 > max_bytes + 2 ? max_bytes + 2 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (rc == 0 && len > max_bytes) rc = -EFBIG;
    if (rc) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *out = buf;
    if (out_len) *out_len = len;
    return 0;
}
