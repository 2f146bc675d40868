/* sim_heap: see sim_heap.h. */
#include "sim_heap.h"

#include <errno.h>
#include <stdlib.h>

void sim_heap_node_init(sim_heap_node *n)
{
    n->deadline_ns = 0;
    n->index = SIM_HEAP_NONE;
}

static void place(sim_heap *h, size_t i, sim_heap_node *n)
{
    h->items[i] = n;
    n->index = i;
}

static void sift_up(sim_heap *h, size_t i)
{
    sim_heap_node *n = h->items[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->items[parent]->deadline_ns <= n->deadline_ns) break;
        place(h, i, h->items[parent]);
        i = parent;
    }
    place(h, i, n);
}

static void sift_down(sim_heap *h, size_t i)
{
    sim_heap_node *n = h->items[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        int64_t best = n->deadline_ns;
        if (l < h->len && h->items[l]->deadline_ns < best) {
            m = l;
            best = h->items[l]->deadline_ns;
        }
        if (r < h->len && h->items[r]->deadline_ns < best) m = r;
        if (m == i) break;
        place(h, i, h->items[m]);
        i = m;
    }
    place(h, i, n);
}

int sim_heap_push(sim_heap *h, sim_heap_node *n)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        sim_heap_node **p = realloc(h->items, cap * sizeof *p);
        if (!p) return -ENOMEM;
        h->items = p;
        h->cap = cap;
    }
    place(h, h->len++, n);
    sift_up(h, h->len - 1);
    return 0;
}

sim_heap_node *sim_heap_top(const sim_heap *h)
{
    return h->len ? h->items[0] : NULL;
}

void sim_heap_remove(sim_heap *h, sim_heap_node *n)
{
    size_t i = n->index;
    if (i == SIM_HEAP_NONE || i >= h->len || h->items[i] != n) return;
    n->index = SIM_HEAP_NONE;
    h->len--;
    if (i == h->len) return;
    place(h, i, h->items[h->len]);
    sift_down(h, i);
    sift_up(h, i);
}

sim_heap_node *sim_heap_pop(sim_heap *h)
{
    sim_heap_node *n = sim_heap_top(h);
    if (n) sim_heap_remove(h, n);
    return n;
}

void sim_heap_free(sim_heap *h)
{
    free(h->items);
    h->items = NULL;
    h->len = h->cap = 0;
}
