// One process-wide mutex in static storage, for HealthGateTesting's `offThreadOneAtATime`.
//
// Why C: a Swift global holding a lock is initialised lazily through `swift_once`, whose fast
// path lives in the uninstrumented Swift runtime, so ThreadSanitizer never sees the
// happens-before it makes and reported the first read of the global on another thread as a race
// (docs/fuzzing.md, "Sanitizer passes"). A `pthread_mutex_t` with PTHREAD_MUTEX_INITIALIZER
// needs no initialisation at run time, and TSan intercepts pthread mutexes.
#ifndef HEALTHGATE_CSTATICMUTEX_H
#define HEALTHGATE_CSTATICMUTEX_H

/// Takes the heavy-work mutex (blocks until it is free).
void hg_heavy_work_lock(void);
/// Releases the heavy-work mutex.
void hg_heavy_work_unlock(void);

#endif
