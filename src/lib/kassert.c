/* kassert.c — the line a broken invariant prints (kassert.h). The kernel's
 * kassert_fail prints it through the console, so it lives beside kprintf
 * (lib/kprintf.c), which checks its own lock with kassert. */
#include "lib/kassert.h"
#include "lib/format.h"

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
#endif
