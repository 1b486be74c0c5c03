#include <lmdb.h>

/* A hint that the cache line at `address` is read soon; it changes nothing else. */
static inline void pushtrail_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
