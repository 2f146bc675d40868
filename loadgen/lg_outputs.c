/* lg_outputs: the run's files (see lg_outputs.h). */

#include "lg_outputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lg_record.h"
#include "rb_file.h"

void lg_outputs_default_name(const lg_opts *o, char *buf, size_t cap)
{
    char rate[32], when[32];
    if (o->n_stages > 1)
        snprintf(rate, sizeof rate, "stages");
    else if (isinf(o->request_rate))
        snprintf(rate, sizeof rate, "inf");
    else
        snprintf(rate, sizeof rate, "%g", o->request_rate);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    const char *model = strrchr(o->model, '/');
    model = model ? model + 1 : o->model;
    char conc[48] = "";
    if (o->max_concurrency) snprintf(conc, sizeof conc, "-concurrency%d", o->max_concurrency);
    snprintf(buf, cap, "loadgen-%sqps%s-%s-%s.json", rate, conc, model, when);
}

void lg_outputs_init(lg_outputs *out, const char *result_path)
{
    memset(out, 0, sizeof *out);
    out->lock_fd = -1;
    snprintf(out->json, sizeof out->json, "%s", result_path);
    size_t n = strlen(result_path);
    int stem = n > 5 && strcmp(result_path + n - 5, ".json") == 0 ? (int)(n - 5) : (int)n;
    snprintf(out->jsonl, sizeof out->jsonl, "%.*s.jsonl", stem, result_path);
    snprintf(out->partial, sizeof out->partial, "%.*s.partial.jsonl", stem, result_path);
}

void lg_outputs_free(lg_outputs *out)
{
    for (int w = 0; w < out->k; w++) {
        if (out->part_fd && out->part_fd[w] >= 0) close(out->part_fd[w]);
        if (out->part && out->part[w][0]) unlink(out->part[w]);
    }
    lg_outputs_forget(out);
    rb_lock_release(out->json, out->lock_fd);
    out->lock_fd = -1;
}

int lg_outputs_check(const lg_opts *o, const char *name, const lg_outputs *out)
{
    if (!strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/')) {
        fprintf(stderr,
                "loadgen: --result-filename '%s': must be a file name (not '.' or '..', no '/'; "
                "the folder is --result-dir)\n",
                name);
        return 2;
    }
    const char *paths[3] = {out->json, out->jsonl, out->partial};
    int n = o->save_detailed ? 3 : 1;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr, "loadgen: --result-filename: '%s' exists and is %s\n", paths[i],
                    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
            return 2;
        }
        /* The temporary it is written under is the longest name. */
        rb_afile f;
        int rc = rb_afile_open(&f, paths[i]);
        if (rc) {
            fprintf(stderr, "loadgen: --result-filename: cannot create '%s': %s\n", f.tmp,
                    rb_file_strerror(rc));
            return 2;
        }
        rb_afile_abort(&f);
    }
    return 0;
}

/* Part files of this result name that a killed run left behind (its
 * coordinator died before it could merge them): with the name's lock held,
 * no live run writes them, so the ones of dead pids are removed, and said. */
static void remove_stale_parts(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    if (!d) return;
    size_t nl = strlen(name);
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *f = e->d_name, *rest;
        char *end;
        if (f[0] != '.' || strncmp(f + 1, name, nl) != 0 || strncmp(f + 1 + nl, ".w", 2) != 0)
            continue;
        rest = f + 3 + nl;
        strtol(rest, &end, 10); /* the worker */
        if (end == rest || *end != '.') continue;
        rest = end + 1;
        long pid = strtol(rest, &end, 10);
        if (end == rest || strcmp(end, ".part") != 0 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to tell */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, f);
        if (unlink(path) == 0) removed++;
    }
    closedir(d);
    if (removed)
        fprintf(stderr,
                "loadgen: note: removed %d per-request part file%s of '%s' left by a run that was "
                "killed before it merged them\n",
                removed, removed == 1 ? "" : "s", name);
}

int lg_outputs_open(const lg_opts *o, int k, const char *dir, const char *name, lg_outputs *out)
{
    long holder = 0;
    out->lock_fd = rb_lock_take(out->json, &holder);
    if (out->lock_fd < 0) {
        if (out->lock_fd == -EWOULDBLOCK)
            fprintf(stderr,
                    "loadgen: --result-filename: another run (pid %ld) is writing '%s'; refused "
                    "(give each concurrent run its own name)\n",
                    holder, out->json);
        else
            fprintf(stderr, "loadgen: --result-filename: cannot lock '%s.lock': %s\n", out->json,
                    rb_file_strerror(out->lock_fd));
        return 2;
    }
    remove_stale_parts(dir, name);
    if (!o->save_detailed) return 0;
    /* 2048: the bound before records had token times, above any record
     * without them */
    out->line_max = lg_record_line_max(o->save_token_times ? o->token_times_cap : 0);
    if (out->line_max < 2048) out->line_max = 2048;
    out->k = k;
    out->part = calloc((size_t)k, sizeof *out->part);
    out->part_fd = malloc((size_t)k * sizeof *out->part_fd);
    if (!out->part || !out->part_fd) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 2;
    }
    for (int w = 0; w < k; w++)
        out->part_fd[w] = -1;
    for (int w = 0; w < k; w++) {
        snprintf(out->part[w], sizeof out->part[w], "%s/.%s.w%d.%ld.part", dir, name, w,
                 (long)getpid());
        out->part_fd[w] =
            open(out->part[w], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (out->part_fd[w] < 0) {
            int e = errno;
            fprintf(stderr, "loadgen: --save-detailed: cannot create '%s': %s\n", out->part[w],
                    strerror(e));
            out->part[w][0] = '\0';
            return 2;
        }
    }
    return 0;
}

/* Copies the whole records of one part into the JSONL (or, for a lost
 * worker, only counts them). line: room for a record of cap bytes, the
 * longest the run writes (NULL with cap SIZE_MAX: only counted). */
static void copy_part(int fd, int lost, rb_recfile *dst, lg_record_count *c, char *line, size_t cap)
{
    static char buf[1 << 16];
    size_t ll = 0;
    int64_t off = 0;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        off += n;
        for (ssize_t i = 0; i < n; i++) {
            if (line && ll < cap) line[ll] = buf[i];
            ll++;
            if (buf[i] != '\n') continue;
            if (ll > cap)
                c->lost++; /* no record is this long: a torn write */
            else if (lost)
                c->left_out++;
            else
                rb_rec_add(dst, line, ll);
            ll = 0;
        }
    }
    /* A half record at the end: a worker killed inside its write. */
    if (ll && !lost) c->lost++;
}

void lg_outputs_commit(lg_outputs *out, int k, const lg_slot *const *slots, const int *lost,
                       lg_record_count *c)
{
    memset(c, 0, sizeof *c);
    for (int w = 0; w < k; w++) {
        const lg_slot *sl = slots[w];
        if (lost[w]) continue;
        c->lost += sl->detailed_lost;
        if (!c->err) c->err = sl->detailed_err;
    }
    rb_afile f;
    int rc = rb_afile_open(&f, out->jsonl);
    rb_recfile r;
    char *line = malloc(out->line_max);
    int have = rc == 0 && line && rb_rec_init(&r, fileno(f.fp), 1 << 20) == 0;
    if (!have && rc == 0) rb_afile_abort(&f);
    if (!have && !c->err) c->err = rc ? rc : -ENOMEM;
    for (int w = 0; w < out->k; w++) {
        if (have) copy_part(out->part_fd[w], lost[w], &r, c, line, out->line_max);
        close(out->part_fd[w]);
        out->part_fd[w] = -1;
        unlink(out->part[w]); /* frees its space before the next is copied */
        out->part[w][0] = '\0';
    }
    free(line);
    if (!have) return;
    rb_rec_flush(&r);
    c->written = r.written;
    c->lost += r.lost;
    if (!c->err) c->err = r.err;
    rb_rec_free(&r);
    if (c->lost == 0) {
        rc = rb_afile_commit(&f);
        if (rc == 0) {
            c->path = out->jsonl;
            unlink(out->partial); /* a previous run's */
            return;
        }
        c->err = rc;
        c->lost += c->written; /* all of it: the file is not there */
        c->written = 0;
        return;
    }
    /* The complete name must not pair an old run's records with this report. */
    unlink(out->jsonl);
    if (c->written && rb_afile_commit_to(&f, out->partial) == 0) {
        c->path = out->partial;
        return;
    }
    if (f.fp) rb_afile_abort(&f);
    c->lost += c->written;
    c->written = 0;
}

void lg_outputs_for_rank(lg_outputs *out, int rank)
{
    size_t n = strlen(out->json);
    int stem = n > 5 && strcmp(out->json + n - 5, ".json") == 0 ? (int)(n - 5) : (int)n;
    char json[2048];
    snprintf(json, sizeof json, "%s", out->json);
    snprintf(out->jsonl, sizeof out->jsonl, "%.*s.rank%d.jsonl", stem, json, rank);
    snprintf(out->partial, sizeof out->partial, "%.*s.rank%d.partial.jsonl", stem, json, rank);
    if (rank) snprintf(out->json, sizeof out->json, "%.*s.rank%d.json", stem, json, rank);
}

uint64_t lg_outputs_drop_lost_part(const char *dir, const char *name, long pid)
{
    char part[2200];
    snprintf(part, sizeof part, "%s/.%s.w0.%ld.part", dir, name, pid);
    int fd = open(part, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    lg_record_count c = {0};
    copy_part(fd, 1, NULL, &c, NULL, SIZE_MAX);
    close(fd);
    unlink(part);
    return c.left_out;
}

void lg_outputs_remove_rank_parts(const char *dir, const char *name)
{
    char prefix[700], path[2200];
    int np = snprintf(prefix, sizeof prefix, ".%s.w0.", name);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, (size_t)np) || n < 5 || strcmp(e->d_name + n - 5, ".part"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
}

void lg_outputs_forget(lg_outputs *out)
{
    free(out->part);
    free(out->part_fd);
    out->part = NULL;
    out->part_fd = NULL;
}
