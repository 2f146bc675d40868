/* lg_outputs: the files of one run, all named from its result name: the
 * result JSON, the per-request JSONL (or its ".partial" name when records
 * were lost), the lock that keeps a second run off the same name, and the
 * workers' part files that the JSONL is joined from at the end.
 *
 * Ownership: an lg_outputs owns its lock and its parts (their descriptors,
 * their names and the files): lg_outputs_free closes and removes whatever is
 * still there. The lg_opts it is given is only read. Every function that can
 * refuse a run prints its message (naming the flag and the path) on stderr
 * and returns 2, the exit code of bad usage; the rest report through
 * lg_record_count. */
#ifndef LG_OUTPUTS_H
#define LG_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"
#include "lg_slots.h"

typedef struct lg_outputs {
    char json[2048];    /* the result */
    char jsonl[2100];   /* the per-request records, when complete */
    char partial[2200]; /* ... when some were lost */
    int lock_fd;        /* rb_lock_take on json (-1: none) */
    /* the workers' parts: "<dir>/.<name>.w<N>.<pid>.part", unique per run */
    char (*part)[2200];
    int *part_fd;
    int k;
    size_t line_max; /* the longest record the parts can hold (lg_record_line_max) */
} lg_outputs;

/* How the per-request records fared. */
typedef struct lg_record_count {
    uint64_t written;  /* in the committed JSONL */
    uint64_t lost;     /* write failures (workers' parts or the JSONL) */
    uint64_t left_out; /* a lost worker's records: its requests are not in the report */
    int err;           /* the first write error */
    const char *path;  /* the committed file (NULL: none) */
} lg_record_count;

/* The result name when --result-filename is not given:
 * "loadgen-<rate>qps[-concurrency<N>]-<model>-<UTC time>.json". */
void lg_outputs_default_name(const lg_opts *o, char *buf, size_t cap);

/* Names the files from the result's path (".json" replaced by ".jsonl" and
 * ".partial.jsonl"); holds nothing yet. */
void lg_outputs_init(lg_outputs *out, const char *result_path);

/* Under --mpi each rank's files: its records are "<stem>.rank<r>.jsonl"
 * (written where the rank runs: no record crosses the network, and the
 * result folder need not be shared), and a rank other than 0 locks
 * "<stem>.rank<r>.json", which it never writes. */
void lg_outputs_for_rank(lg_outputs *out, int rank);

/* Refuses, before the first request, a result name the run could not write
 * at its end: '.', '..', a path, an existing directory, a name too long for
 * the file system once the temporary suffix is added. Returns 0 or 2. */
int lg_outputs_check(const lg_opts *o, const char *name, const lg_outputs *out);

/* Takes the result's lock, removes the parts of this name that a killed run
 * left (said on stderr) and, with --save-detailed, creates k workers' parts
 * in dir. Returns 0 or 2 (what is held then is freed by lg_outputs_free). */
int lg_outputs_open(const lg_opts *o, int k, const char *dir, const char *name, lg_outputs *out);

/* Joins the parts into the JSONL: under its own name only when no record
 * was lost; else what survived goes to the ".partial" name and the loss is
 * counted. A lost worker's records (lost[w]) are left out (its requests are
 * left out of the report) and counted. The parts are removed as they are
 * read. slots: the k workers' (their own write failures are counted). */
void lg_outputs_commit(lg_outputs *out, int k, const lg_slot *const *slots, const int *lost,
                       lg_record_count *c);

/* --mpi, at rank 0: the part "<dir>/.<name>.w0.<pid>.part" that a lost rank
 * of this host left: returns how many whole records it held (they are left
 * out, as its requests are of the report) and removes it; 0 if none. */
uint64_t lg_outputs_drop_lost_part(const char *dir, const char *name, long pid);

/* --mpi-salvage: removes every rank's part of this name (".<name>.w0.*.part"
 * in dir); the name's lock keeps any other run of it away. */
void lg_outputs_remove_rank_parts(const char *dir, const char *name);

/* Closes and removes the parts still there (a run that stops early),
 * releases the lock and frees. */
void lg_outputs_free(lg_outputs *out);

/* In a forked worker: frees the memory only (the files and the lock are the
 * coordinator's). */
void lg_outputs_forget(lg_outputs *out);

#endif
