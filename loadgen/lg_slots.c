/* lg_slots: the layout of the workers' region (see lg_slots.h). */
#include "lg_slots.h"

#define ALIGN_UP(x) (((x) + LG_SLOTS_PAGE - 1) & ~(size_t)(LG_SLOTS_PAGE - 1))

size_t lg_slot_header_bytes(void)
{
    return ALIGN_UP(sizeof(lg_slot));
}

size_t lg_slot_bytes(int n_stages)
{
    return lg_slot_header_bytes() + (size_t)n_stages * lg_stats_block_bytes() +
           ALIGN_UP(LG_SAMPLE_PER_WORKER * sizeof(lg_dispatch_sample));
}

size_t lg_slots_region_bytes(int k, int n_stages)
{
    return LG_SLOTS_PAGE + (size_t)k * lg_slot_bytes(n_stages);
}

lg_shared *lg_slots_shared(void *region)
{
    return (lg_shared *)region;
}

lg_slot *lg_slots_slot(void *region, int n_stages, int w)
{
    return (lg_slot *)((char *)region + LG_SLOTS_PAGE + (size_t)w * lg_slot_bytes(n_stages));
}

lg_stage_stats *lg_slots_stats(void *region, int n_stages, int w, int stage)
{
    return (lg_stage_stats *)((char *)lg_slots_slot(region, n_stages, w) + lg_slot_header_bytes() +
                              (size_t)stage * lg_stats_block_bytes());
}

lg_dispatch_sample *lg_slots_sample(void *region, int n_stages, int w)
{
    return (lg_dispatch_sample *)((char *)lg_slots_slot(region, n_stages, w) +
                                  lg_slot_header_bytes() +
                                  (size_t)n_stages * lg_stats_block_bytes());
}
