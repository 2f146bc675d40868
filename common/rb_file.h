/* rb_file: the one checked path for the files the programs write and read.
 * Outputs are written under a temporary name and renamed into place, so a
 * reader never sees half a report, and every write is checked: a file whose
 * write failed is never committed as if complete. Records (one JSON line
 * each) go through rb_recfile, which writes each record whole or counts it
 * lost. Inputs are read only from regular files, bounded by their size
 * before a byte is read. Not thread-safe per handle. */
#ifndef RB_FILE_H
#define RB_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Returned by rb_read_file for a FIFO, device or socket. */
#define RB_ENOTREG 4096
/* Returned by rb_lock_take for a symbolic link, or a file of more than one
 * (hard) link, at the lock's name. */
#define RB_ELINK 4097

/* The message of an rb_file error code (-errno, -RB_ENOTREG, -RB_ELINK). */
const char *rb_file_strerror(int rc);

typedef struct rb_afile {
    FILE *fp;
    char path[4096];
    char tmp[4200];
} rb_afile;

/* Opens "<path>.tmp.<pid>" for writing (created, never an existing file).
 * Returns 0 or -errno. */
int rb_afile_open(rb_afile *f, const char *path);
/* fflush + fsync + close + rename onto path. Any write that failed on the
 * stream (ferror) makes it fail, and then the temporary is removed and the
 * path left as it was. Returns 0 or -errno. */
int rb_afile_commit(rb_afile *f);
/* The same, renamed onto another path (e.g. a ".partial" name). */
int rb_afile_commit_to(rb_afile *f, const char *path);
/* Closes and removes the temporary file. */
void rb_afile_abort(rb_afile *f);

/* Writes a whole buffer atomically. Returns 0 or -errno. */
int rb_write_file_atomic(const char *path, const void *buf, size_t len);

/* A buffered writer of whole records on a descriptor open for writing (it
 * does not own it). Records are appended at `end`; a write that fails or
 * falls short is cut back to the last whole record (ftruncate), and the
 * records it carried are counted in `lost`. Later records are still tried
 * (a disk that frees up takes them). */
typedef struct rb_recfile {
    int fd;
    char *buf;
    size_t len, cap;
    uint64_t pending; /* records in buf */
    uint64_t written; /* records on file */
    uint64_t lost;    /* records whose write failed */
    int64_t end;      /* bytes of whole records on file */
    int err;          /* the first write error (-errno); 0: none */
} rb_recfile;

/* cap: buffer bytes (records longer are written alone). Returns 0 or -ENOMEM. */
int rb_rec_init(rb_recfile *f, int fd, size_t cap);
/* Adds one record. Returns 0, or -errno when a flush it needed failed. */
int rb_rec_add(rb_recfile *f, const void *rec, size_t len);
/* Writes the buffered records. Returns 0 or -errno (they are then lost). */
int rb_rec_flush(rb_recfile *f);
/* Frees the buffer (buffered records are dropped uncounted: flush first). */
void rb_rec_free(rb_recfile *f);

/* Checks that a directory exists (creating it and its parents if needed) and
 * that a file can be created in it. Returns 0 or -errno. Used to refuse a run
 * before it starts, rather than lose its results at the end. */
int rb_dir_check_writable(const char *dir);

/* An exclusive lock on "<path>.lock" (created if needed) so that two
 * processes never write the same output at once. Non-blocking: returns the
 * lock's descriptor, or -EWOULDBLOCK when another process holds it (*holder
 * is then its pid when known, else 0), or -errno. A lock path that is not a
 * regular file of one link is refused, never opened through: -RB_ELINK for
 * a symbolic or hard link, -RB_ENOTREG for a FIFO, device or socket. */
int rb_lock_take(const char *path, long *holder);
/* Releases it and removes the lock file. */
void rb_lock_release(const char *path, int fd);

/* Reads a whole regular file into a NUL-terminated malloc'd buffer (caller
 * frees). A FIFO, device or socket is refused (-RB_ENOTREG) without waiting
 * for it, a directory with -EISDIR, and a file larger than max_bytes with
 * -EFBIG before it is read. Returns 0 or a negative code. */
int rb_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len);

#endif
