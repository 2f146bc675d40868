/* rb_host: the facts that bind a measurement to a machine (CPU model, online
 * cores, kernel). Used in every report and in calibrate's certificate. */
#ifndef RB_HOST_H
#define RB_HOST_H

typedef struct rb_host {
    char cpu_model[160];
    int cores_online;
    char kernel[160]; /* uname -sr */
    char hostname[96];
} rb_host;

/* Fills *h from /proc/cpuinfo, sysconf and uname. Never fails: unknown
 * fields read "unknown". */
void rb_host_read(rb_host *h);

#endif
