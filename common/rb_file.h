/* rb_file: files are written under a temporary name and renamed into place,
 * so a reader never sees half a report. Not thread-safe per handle. */
#ifndef RB_FILE_H
#define RB_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct rb_afile {
    FILE *fp;
    char path[4096];
    char tmp[4200];
} rb_afile;

/* Opens "<path>.tmp.<pid>" for writing. Returns 0 or -errno. */
int rb_afile_open(rb_afile *f, const char *path);
/* fflush + fsync + close + rename onto path. Returns 0 or -errno. */
int rb_afile_commit(rb_afile *f);
/* Closes and removes the temporary file. */
void rb_afile_abort(rb_afile *f);

/* Writes a whole buffer atomically. Returns 0 or -errno. */
int rb_write_file_atomic(const char *path, const void *buf, size_t len);

/* Checks that a directory exists (creating it and its parents if needed) and
 * that a file can be created in it. Returns 0 or -errno. Used to refuse a run
 * before it starts, rather than lose its results at the end. */
int rb_dir_check_writable(const char *dir);

/* Reads a whole file into a NUL-terminated malloc'd buffer (caller frees).
 * max_bytes bounds it. Returns 0 or -errno (-EFBIG past max_bytes). */
int rb_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len);

#endif
