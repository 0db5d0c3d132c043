/* kassert.c — report a broken invariant and park the CPU (kassert.h). */
#include "lib/kassert.h"
#include "lib/format.h"

#define KASSERT_LINE_MAX 160

int kassert_format(char *buf, size_t cap, uint32_t cpu, const char *file, unsigned line,
                   const char *expr)
{
    return ksnprintf(buf, cap, "KASSERT cpu=%u %s:%u: %s", cpu, file, line, expr);
}

#ifdef HOST_BUILD
#include <stdio.h>
#include <stdlib.h>

/* Host tools and tests built of kernel files: report and abort. Weak, so
 * that a test of kassert itself (test_kassert.c) can catch the call. */
__attribute__((weak)) void kassert_fail(const char *file, unsigned line, const char *expr)
{
    char text[KASSERT_LINE_MAX];
    kassert_format(text, sizeof text, 0, file, line, expr);
    fprintf(stderr, "%s\n", text);
    abort();
}
#else
#include "lib/kprintf.h"
#include "arch/cpu.h"
#include "arch/percpu.h"

void kassert_fail(const char *file, unsigned line, const char *expr)
{
    char text[KASSERT_LINE_MAX];
    kassert_format(text, sizeof text, this_cpu_index(), file, line, expr);
    kprintf("\n%s\n", text);
    /* Invalid opcode (#UD): the exception path parks this CPU, after
     * giving back a snapshot or the console it may hold. */
    __asm__ volatile("ud2");
    cpu_park();
}
#endif
