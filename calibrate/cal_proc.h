/* cal_proc: calibrate's child processes (the simulator, one loadgen per step).
 * Each child runs in its own process group, so a stop reaches its own
 * children too (loadgen's workers); it gets PR_SET_PDEATHSIG(SIGTERM), so it
 * dies with calibrate even on SIGKILL. Every live child is in a small registry
 * that cal_proc_kill_all (async-signal-safe) and an atexit handler empty, so
 * nothing outlives calibrate whatever happens. Main thread only. */
#ifndef CAL_PROC_H
#define CAL_PROC_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Installs SIGINT/SIGTERM/SIGHUP handlers (they stop every child and set
 * the flag that cal_proc_interrupted reports) and the atexit handler. */
void cal_proc_install(void);
/* The signal that interrupted calibrate, or 0. */
int cal_proc_interrupted(void);

/* Starts argv[0] with argv, stdout and stderr to log_path (truncated).
 * Returns 0 and *pid, or -errno. */
int cal_proc_spawn(char *const argv[], const char *log_path, pid_t *pid);

/* The same, with the child (and what it starts) bound to CPU cpu when
 * cpu >= 0, and scheduled SCHED_FIFO at rt_priority when > 0 (both best
 * effort: a refusal is ignored). */
int cal_proc_spawn_on(char *const argv[], const char *log_path, int cpu, int rt_priority,
                      pid_t *pid);

/* Two distinct CPUs this process may run on, the first and the last of its
 * affinity set: 0, or -1 (fewer than two; both set to -1). */
int cal_proc_pick_cpus(int *client, int *server);

/* Where a certificate's simulator and k loadgen workers run, apart: the
 * simulator on the allowed CPU that was the busiest (the lowest idle[c];
 * idle has n entries, a missing or NAN one counts as idle), the workers on
 * all the other allowed CPUs. 0 with *sim_cpu and *workers set, or -1 when
 * fewer than k + 1 CPUs are allowed (then nothing is placed). */
int cal_proc_place(const double *idle, int n, const cpu_set_t *allowed, int k, int *sim_cpu,
                   cpu_set_t *workers);

/* Waits for pid up to timeout_ns; on timeout or interruption stops it
 * (SIGTERM to its group, SIGKILL 3 s later). Returns the exit status
 * (0..255), 128 + signal when killed by one, or -ETIMEDOUT / -EINTR. */
int cal_proc_wait(pid_t pid, int64_t timeout_ns);

/* Stops pid's group (SIGTERM, then SIGKILL after grace_ns) and reaps it. */
void cal_proc_stop(pid_t pid, int64_t grace_ns);

/* SIGKILLs every registered child's group. Async-signal-safe. */
void cal_proc_kill_all(void);

/* Polls log_path until a line "listening http://HOST:PORT" appears (returns
 * the port), the child exits (-ECHILD) or timeout_ns passes (-ETIMEDOUT). */
int cal_proc_wait_listening(pid_t pid, const char *log_path, int64_t timeout_ns);

/* Parses one line "listening http://127.0.0.1:PORT": the port, or -EINVAL. Pure. */
int cal_parse_listening(const char *line);

/* dirname(/proc/self/exe) + "/" + rel into out. 0 or -errno. */
int cal_proc_sibling(const char *rel, char *out, size_t n);

#endif
