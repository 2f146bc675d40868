/* cal_step: one step of a calibration sweep (one loadgen run at one offered
 * rate with k workers), read from loadgen's documented result JSON. Pure: takes
 * the file's text, fills a struct. Single-threaded.
 *
 * Units: rates per second, times in the unit their name says. The figures
 * calibrate derives for the fit:
 *   event_rate_per_worker  lambda of the fit: SSE events per second per worker
 *                          (mean over workers). An event, not a callback, is the
 *                          unit because --client-cost is paid per event, and with
 *                          a server that spaces its tokens (inter-token latency)
 *                          each event is its own callback.
 *   service_per_event_us   busy time per event: sum(callbacks * E[S_cb]) /
 *                          sum(events), over the workers.
 *   events_per_request     events / completed requests: converts event rates to
 *                          the request rates users plan with. */
#ifndef CAL_STEP_H
#define CAL_STEP_H

#include <stddef.h>
#include <stdint.h>

#define CAL_MAX_WORKERS 64

typedef struct cal_worker_meas {
    double rho;
    double callbacks;
    double callback_rate_per_s;
    double mean_service_us;   /* per callback */
    double second_moment_us2; /* per callback */
    double events;
    double event_rate_per_s;
} cal_worker_meas;

typedef struct cal_step {
    int workers;          /* k asked for */
    double request_rate;  /* offered, requests/s, all workers */
    double achieved_rate; /* requests/s */
    double duration_s;
    double send_window_s; /* the window achieved_rate is counted over (NAN: absent) */
    int64_t dispatched;   /* -1: absent */
    int64_t completed, failed;
    double lag_p50_ms, lag_mean_ms, lag_p99_ms;
    int n_meas; /* workers found in client_bias.workers */
    cal_worker_meas w[CAL_MAX_WORKERS];
    /* derived */
    double rho_mean, rho_max;
    double event_rate_per_worker;
    double callback_rate_per_worker;
    double service_per_event_us;
    double mean_service_us, second_moment_us2; /* per callback, callback-weighted */
    double events_per_request;
    /* the client's own delay per token: client_bias.client_delay_us (delivery
     * minus the kernel's receive time) when the result has it, else
     * client_bias.overhead_per_token_us (delivery minus the server's stamp) */
    double overhead_mean_us, overhead_median_us, overhead_p99_us;
    char delay_source[24];  /* which of the two: "client_delay_us" or "overhead_per_token_us" */
    char receive_clock[12]; /* "kernel", "mixed", "user", or "" (not said) */
    double predicted_wq_us; /* loadgen's own PK prediction (NAN: absent) */
    double arrival_p_value; /* NAN: absent */
    char verdict[16];
    /* filled by the sweep and the fit */
    int saturated;
    char why[160];
    int level;         /* the load level this batch belongs to (-1: none; see cal_level.h) */
    int probe;         /* a batch of the cost model's probe (unpaced tokens): not in the curve */
    int plain;         /* its responses were not streamed (a probe's) */
    double host_busy;  /* all CPUs of the host, busy fraction during the batch (NAN: unknown) */
    double host_other; /* of all CPUs' time, the share other processes took (NAN: unknown) */
    double run_delay_share; /* client_bias.host.run_delay_share: the busiest worker's time
                               waiting for a CPU while runnable (NAN: absent) */
    double cpu_latency_us;  /* host.cpu_latency_qos: the host's limit (us) that every worker
                               held (NAN: not held by all, or absent) */
    int retried;            /* batches measured again before this one, their host too busy */
    int confirmed;          /* a repeat of a step that looked bad, and bad again */
    int repeated;           /* measured twice, both pooled (cal_sweep_pool_repeat) */
    int used_in_fit;
    int apart;      /* measured with the simulator on a CPU of its own (calibrate's placement) */
    int superseded; /* a placed sweep that certified nothing, its k measured again sharing the
                       CPUs: in the certificate's table, in no fit */
    double fit_pred_us; /* the fitted curve at this step's lambda (NAN: none) */
} cal_step;

/* Sets every figure to "not measured" (NAN / 0). */
void cal_step_clear(cal_step *s);

/* The host's busy fraction and the share of all CPUs' time that other
 * processes took, over a batch: busy_ns and total_ns are the deltas of the
 * host's busy and total CPU time (rb_host_sample, in ns), own_s the CPU
 * seconds this run's own processes used meanwhile. The share is >= 0; both
 * are NAN when total_ns is not positive. */
void cal_step_host_shares(double busy_ns, double total_ns, double own_s, double *busy,
                          double *other);

/* The CPU latency QoS (us) that every one of the n steps held, the
 * largest limit of them; NAN when one did not hold it, or n is 0. */
double cal_step_cpu_latency(const cal_step *s, int n);

/* 1 when no worker received an event and nothing failed in the batch: at a
 * low rate over a short window (5 requests/s, results/calibrate/
 * busy-placement) it measured nothing, neither within budget nor over it. */
int cal_step_empty(const cal_step *s);

/* Parses a loadgen result. Returns 0, or -EINVAL with err naming what was
 * missing or malformed ("result: client_bias.workers: missing"). Keys
 * other than the documented ones are ignored. */
int cal_step_parse(const char *json, size_t len, cal_step *s, char *err, size_t errlen);

#endif
