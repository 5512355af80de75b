/* LD_PRELOAD shim: sysconf() reports one CPU, so Swift concurrency's cooperative pool gets one
 * thread, as on a single-core board. Code that blocks a pool thread while it waits for other
 * async work then deadlocks at once instead of only when a 2-core CI machine is unlucky.
 * Used by scripts/test.sh (a second test pass) and SingleCoreRunTests. Test-only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

long sysconf(int name) {
    static long (*real)(int);
    if (!real) real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) return 1;
    return real(name);
}
