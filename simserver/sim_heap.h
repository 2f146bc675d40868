/* sim_heap: a binary min-heap of deadlines, the pacing queue of a worker
 * loop. Nodes are embedded in their owners (a stream), which find them again
 * with container_of-style casts; each node knows its index, so removal is
 * O(log n). Pure; owned by one loop thread. */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_heap_node {
    int64_t deadline_ns;
    size_t index; /* SIM_HEAP_NONE when not in a heap */
} sim_heap_node;

#define SIM_HEAP_NONE ((size_t)-1)

typedef struct sim_heap {
    sim_heap_node **items;
    size_t len, cap;
} sim_heap;

void sim_heap_node_init(sim_heap_node *n);
/* Returns 0 or -ENOMEM. The node must not be in a heap. */
int sim_heap_push(sim_heap *h, sim_heap_node *n);
sim_heap_node *sim_heap_top(const sim_heap *h);
sim_heap_node *sim_heap_pop(sim_heap *h);
/* Removes n if it is in the heap. */
void sim_heap_remove(sim_heap *h, sim_heap_node *n);
void sim_heap_free(sim_heap *h);

#endif
