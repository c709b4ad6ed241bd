#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>

#include "CAtriumSupport.h"

/* The CPUs the scheduler lets this process run on (a cpuset or taskset narrows them), at least 1:
   the default number of media workers. CPU_COUNT is a macro Swift cannot call. */
int atrium_usable_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        return n > 0 ? n : 1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 && online < 1 << 20 ? (int)online : 1;
}
