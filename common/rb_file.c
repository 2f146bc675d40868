/* rb_file: see rb_file.h. */
#include "rb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rb_afile_open(rb_afile *f, const char *path)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path) return -ENAMETOOLONG;
    strcpy(f->path, path);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    f->fp = fopen(f->tmp, "w");
    if (!f->fp) return -errno;
    return 0;
}

int rb_afile_commit(rb_afile *f)
{
    if (!f->fp) return -EBADF;
    int rc = 0;
    if (fflush(f->fp) != 0) rc = -errno;
    if (rc == 0 && fsync(fileno(f->fp)) != 0 && errno != EINVAL) rc = -errno;
    if (fclose(f->fp) != 0 && rc == 0) rc = -errno;
    f->fp = NULL;
    if (rc == 0 && rename(f->tmp, f->path) != 0) rc = -errno;
    if (rc != 0) unlink(f->tmp);
    return rc;
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
    if (len && fwrite(buf, 1, len, f.fp) != len) {
        rc = -errno;
        rb_afile_abort(&f);
        return rc ? rc : -EIO;
    }
    return rb_afile_commit(&f);
}

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
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return -errno;
    close(fd);
    unlink(probe);
    return 0;
}

int rb_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return -errno;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(fp);
        return -ENOMEM;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > max_bytes + 1) {
                free(buf);
                fclose(fp);
                return -EFBIG;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(fp);
                return -ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - 1 - len, fp);
        len += n;
        if (n == 0) break;
    }
    int err = ferror(fp);
    fclose(fp);
    if (err) {
        free(buf);
        return -EIO;
    }
    if (len > max_bytes) {
        free(buf);
        return -EFBIG;
    }
    buf[len] = '\0';
    *out = buf;
    if (out_len) *out_len = len;
    return 0;
}
