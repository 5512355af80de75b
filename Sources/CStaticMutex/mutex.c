#include <pthread.h>
#include "CStaticMutex.h"

static pthread_mutex_t heavy_work = PTHREAD_MUTEX_INITIALIZER;

void hg_heavy_work_lock(void) { pthread_mutex_lock(&heavy_work); }
void hg_heavy_work_unlock(void) { pthread_mutex_unlock(&heavy_work); }
