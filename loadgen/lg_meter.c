/* lg_meter: see lg_meter.h. */
#include "lg_meter.h"

#include <string.h>

void lg_meter_init(lg_meter *m)
{
    memset(m, 0, sizeof *m);
    m->stage = -1;
}

void lg_meter_callback(lg_meter *m, int64_t dt_ns)
{
    if (!m->in_window) return;
    double dt = (double)dt_ns;
    m->callbacks++;
    m->svc_sum += dt;
    m->svc_sumsq += dt * dt;
}

void lg_meter_event(lg_meter *m)
{
    if (m->in_window) m->events++;
}

void lg_meter_stage(lg_meter *m, int64_t now_ns, int64_t loop_idle_ns, const rb_host_reading *h,
                    int next, lg_stage_stats *closing)
{
    if (m->stage >= 0 && closing) {
        lg_stage_stats *st = closing;
        st->loop_window_ns += now_ns - m->at_ns;
        st->loop_idle_ns += loop_idle_ns - m->at_idle_ns;
        st->svc_n += m->callbacks - m->at_callbacks;
        st->svc_sum_ns += m->svc_sum - m->at_svc_sum;
        st->svc_sumsq_ns2 += m->svc_sumsq - m->at_svc_sumsq;
        if (h->run_delay_ns >= 0 && m->at.run_delay_ns >= 0)
            st->run_delay_ns += h->run_delay_ns - m->at.run_delay_ns;
        st->nivcsw += h->nivcsw - m->at.nivcsw;
        st->host_steal_ns += h->steal_ns - m->at.steal_ns;
        st->host_cpu_ns += h->cpu_ns - m->at.cpu_ns;
    }
    m->stage = next;
    m->at_ns = now_ns;
    m->at_idle_ns = loop_idle_ns;
    m->at = *h;
    m->at_callbacks = m->callbacks;
    m->at_svc_sum = m->svc_sum;
    m->at_svc_sumsq = m->svc_sumsq;
}

void lg_meter_open(lg_meter *m, int64_t now_ns, int64_t loop_idle_ns, const rb_host_reading *h,
                   int stage)
{
    m->in_window = 1;
    m->idle_at_open_ns = loop_idle_ns;
    m->nivcsw_at_open = h->nivcsw;
    lg_meter_stage(m, now_ns, loop_idle_ns, h, stage, NULL);
}

int lg_meter_end_window(lg_meter *m, int64_t now_ns, int64_t loop_idle_ns, const rb_host_reading *h,
                        lg_stage_stats *closing, lg_slot *slot)
{
    if (!m->in_window) return 0;
    lg_meter_stage(m, now_ns, loop_idle_ns, h, -1, closing);
    m->in_window = 0;
    slot->window_end_ns = now_ns;
    slot->idle_ns = loop_idle_ns - m->idle_at_open_ns;
    slot->callbacks = m->callbacks;
    slot->svc_sum_ns = m->svc_sum;
    slot->svc_sumsq_ns2 = m->svc_sumsq;
    slot->events = m->events;
    slot->nivcsw = h->nivcsw - m->nivcsw_at_open;
    return 1;
}

/* The server's stamps: its own view, to set the measured times against. */
static void split_stamp(lg_stage_stats *st, lg_meter_chain *c, const lg_meter_tok *tok)
{
    if (!tok->stamp_ns) {
        c->last_stamp_ns = 0; /* a token without a stamp breaks the chain */
        return;
    }
    lg_stats_record_ns(st, LG_H_OVERHEAD, tok->tu_ns - tok->stamp_ns);
    if (c->last_stamp_ns)
        lg_stats_record_ns(st, LG_H_ITL_S, tok->stamp_ns - c->last_stamp_ns);
    else if (c->tokens == 1)
        lg_stats_record_ns(st, LG_H_TTFT_S, tok->stamp_ns - tok->dispatch_ns);
    c->last_stamp_ns = tok->stamp_ns;
}

void lg_meter_token(lg_stage_stats *st, lg_meter_chain *c, const lg_meter_tok *tok)
{
    int64_t t = tok->t_ns, tu = tok->tu_ns;
    if (!c->first_ns) {
        c->first_ns = t;
        c->first_u_ns = tu;
    } else {
        int64_t gap = t - c->last_ns;
        lg_stats_record_itl(st, gap);
        if (gap > c->max_gap_ns) c->max_gap_ns = gap;
        lg_stats_record_ns(st, LG_H_ITL_U, tu - c->last_u_ns);
    }
    c->last_ns = t;
    c->last_u_ns = tu;
    c->tokens++;
    split_stamp(st, c, tok);
    if (tok->read_kind != LG_RX_DELIVERY && tok->entry_ns)
        lg_stats_record_ns(st, LG_H_PROCESSING, tu - tok->entry_ns);
    if (tok->kind != LG_RX_WIRE && tok->kind != LG_RX_KERNEL) {
        st->rx_user_tokens++;
        return;
    }
    st->rx_kernel_tokens++;
    if (tok->kind == LG_RX_WIRE) {
        /* its own segment's time: exact, not part of the read's batch */
        st->rx_wire_tokens++;
        st->rx_exact_tokens++;
    }
    lg_stats_record_ns(st, LG_H_CLIENT_DELAY, tu - t);
    if (tok->entry_ns) lg_stats_record_ns(st, LG_H_PICKUP, tok->entry_ns - t);
    if (tok->stamp_ns) lg_stats_record_ns(st, LG_H_SERVER_SEND, t - tok->stamp_ns);
}
