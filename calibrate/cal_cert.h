/* cal_cert: the host certificate as JSON, both ways. Pure (cJSON, no I/O):
 * the caller writes the text atomically and reads files itself. The keys
 * loadgen relies on are written and read by common/rb_cert (the one place
 * for them); this module adds and reads calibrate's other keys around them.
 *
 * Format version 2 (rhobench_certificate: 2). The keys loadgen --certificate
 * relies on: host.cpu_model, host.cores_online, budget_us; per_k[].workers
 * and per_k[].safe_rho, the primary figure: the per-worker utilisation up
 * to which the client's own delay stays within budget, whatever the
 * workload; cost_model.per_request_us, per_delivery_us, per_event_us and
 * per_plain_response_us with per_k[].cost_scale, with which loadgen
 * predicts a plan's utilisation (rb_cert.h); reference_workload (tokens,
 * pacing, events per request, the rate unit) with per_k[].safe_total_rate
 * and per_k[].safe_rate_per_worker in requests/s of that workload only.
 * Beside them: created, host facts and load average, versions, the model,
 * the fitted curve (transport_us, r_us with their bootstrap intervals, the
 * goodness of fit), which bound limits the certificate and why
 * (limited_by, certified_note, host_limited, host_note), the measured
 * levels and the batch table. Figures that were not measured are null.
 * Version 1 (requests/s of the calibration's workload only) is read too. */
#ifndef CAL_CERT_H
#define CAL_CERT_H

#include <stddef.h>

#include "cal_fit.h"
#include "cal_step.h"
#include "rb_cert.h"
#include "rb_host.h"

#define CAL_CERT_MAX_K 16

typedef struct cal_cert_info {
    char created[40]; /* ISO-8601 UTC, "2026-01-02T03:04:05Z" */
    rb_host host;
    char version_rhobench[32], version_libcurl[32], version_libuv[32];
    double budget_us;
    char model[64];       /* the fit's model name */
    char mode[16];        /* "quick", "default", "thorough" */
    int self_test;        /* 1: the client cost was injected */
    char client_cost[32]; /* "fixed:200" or "" */
    double server_itl_us; /* the simulator's inter-token latency */
    int output_len, input_len;
    double step_duration_s;
    /* where the simulator and the workers ran (cal_proc_place): the
     * simulator's CPU (-1: not placed, every k shared the CPUs), its idle
     * share at the start, its nice, the workers' CPUs, and the first k that
     * shared the CPUs */
    int place_sim_cpu, place_sim_nice, place_shared_from_k;
    double place_sim_cpu_idle;
    char place_worker_cpus[64];
    double loadavg_start, loadavg_end; /* 1-minute load average around the run */
    double cpu_latency_us; /* the CPU latency QoS every counted batch held (NAN: not all) */
    int batches_retried;   /* measured again: other processes took the CPUs */
    int batches_disturbed; /* kept although other processes took the CPUs (retries used up) */
    double other_max;      /* the share of the host's CPU time that counts as disturbed */
    cal_cost cost;         /* the client's cost model */
    double ref_events_per_request; /* of the reference workload, as measured */
    int version;                   /* read back: the certificate's format version */
} cal_cert_info;

#define CAL_CERT_VERSION RB_CERT_VERSION

/* The certificate's text (malloc'd, caller frees), or NULL on no memory.
 * steps may be NULL (no table). */
char *cal_cert_to_json(const cal_cert_info *info, const cal_per_k *pk, int npk,
                       const cal_step *steps, int nsteps);

/* Reads a certificate back: info and per_k[0..*npk) (at most max). Fields
 * absent or null read as NAN / "". Returns 0, or -EINVAL with err naming the
 * key ("certificate: per_k[1].safe_rho: missing"). The keys loadgen relies on
 * are read and required by rb_cert_read, as loadgen reads them. */
int cal_cert_parse(const char *json, size_t len, cal_cert_info *info, cal_per_k *pk, int max,
                   int *npk, char *err, size_t errlen);

#endif
