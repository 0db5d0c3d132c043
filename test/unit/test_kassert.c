/* test_kassert.c — kassert(): the line it prints, and that the macro calls
 * kassert_fail only for a false expression, naming it as written.
 *
 * kassert_fail itself is the kernel's (it prints and raises #UD); here a
 * stand-in records its arguments and jumps back. */
#include <setjmp.h>
#include <string.h>
#include "check.h"
#include "lib/kassert.h"

static jmp_buf back;
static const char *got_file, *got_expr;
static unsigned got_line, calls;

void kassert_fail(const char *file, unsigned line, const char *expr)
{
    got_file = file;
    got_line = line;
    got_expr = expr;
    calls++;
    longjmp(back, 1);
}

static void format_line(void)
{
    char buf[160];
    int n = kassert_format(buf, sizeof buf, 3, "src/recorder/snapshot.c", 88, "used <= capacity");
    CHECK(!strcmp(buf, "KASSERT cpu=3 src/recorder/snapshot.c:88: used <= capacity"));
    CHECK_EQ(n, strlen(buf));
    char small[16];
    n = kassert_format(small, sizeof small, 12, "a.c", 1, "x");
    CHECK_EQ(strlen(small), sizeof small - 1);       /* cut short, terminated */
    CHECK(!strncmp(small, "KASSERT cpu=12 ", 15));
    CHECK_EQ(n, strlen("KASSERT cpu=12 a.c:1: x"));
}

static void macro(void)
{
    volatile int head = 5, commit = 7;
    kassert(commit >= head);                          /* true: no call */
    CHECK_EQ(calls, 0);
    volatile unsigned line = 0;
    if (!setjmp(back)) {
        line = __LINE__ + 1;
        kassert(head >= commit);
        CHECK(0);                                     /* not reached */
    }
    CHECK_EQ(calls, 1);
    CHECK_EQ(got_line, line);
    CHECK(!strcmp(got_expr, "head >= commit"));
    CHECK(strstr(got_file, "test_kassert.c") != NULL);
}

int main(void)
{
    format_line();
    macro();
    return check_summary("kassert");
}
