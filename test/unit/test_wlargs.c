/* test_wlargs.c — workload= text: NAME[:KEY=VALUE,...] (src/lab/wlargs.c). */
#include <string.h>
#include "lab/wlargs.h"
#include "check.h"

static const struct wl_param params[] = {
    { "width", "ms", 500, 1, 60000, false },
    { "thresh", "us", 10, 1, 1000000, false },
    { NULL, NULL, 0, 0, 0, false },
};

static char last[200];
static unsigned warned;

static void warn(void *ctx, const char *msg)
{
    (void)ctx;
    warned++;
    strncpy(last, msg, sizeof last - 1);
}

static unsigned apply(const char *text, uint64_t *v)
{
    warned = 0;
    last[0] = '\0';
    return wlargs_apply(text, params, v, NULL, warn, NULL);
}

int main(void)
{
    char name[16];
    CHECK(wlargs_name("hwlat", name, sizeof name) && !strcmp(name, "hwlat"));
    CHECK(wlargs_name("hwlat:width=5", name, sizeof name) && !strcmp(name, "hwlat"));
    CHECK(!wlargs_name(":width=5", name, sizeof name));            /* empty name */
    CHECK(!wlargs_name("averyveryverylongname", name, sizeof name));

    uint64_t v[WL_MAX_PARAMS];
    CHECK_EQ(apply("hwlat", v), 0);
    CHECK(v[0] == 500 && v[1] == 10);                               /* defaults */
    CHECK_EQ(apply("hwlat:width=200,thresh=5", v), 0);
    CHECK(v[0] == 200 && v[1] == 5);
    CHECK_EQ(apply("hwlat:thresh=7", v), 0);
    CHECK(v[0] == 500 && v[1] == 7);                                /* others default */
    CHECK_EQ(apply("hwlat:", v), 0);
    CHECK_EQ(apply("hwlat:width=1,,thresh=1000000", v), 0);         /* empty pair skipped */
    CHECK(v[0] == 1 && v[1] == 1000000);

    CHECK_EQ(apply("hwlat:bogus=1,width=9", v), 1);
    CHECK(v[0] == 9 && strstr(last, "unknown parameter 'bogus'") && strstr(last, "width thresh"));
    CHECK_EQ(apply("hwlat:width=0", v), 1);                         /* below min */
    CHECK(v[0] == 500 && strstr(last, "from 1 to 60000ms") && strstr(last, "using 500"));
    CHECK_EQ(apply("hwlat:width=60001", v), 1);                     /* above max */
    CHECK_EQ(apply("hwlat:width=12x", v), 1);                       /* junk */
    CHECK_EQ(apply("hwlat:width=", v), 1);                          /* no value */
    CHECK_EQ(apply("hwlat:width", v), 1);                           /* no '=' */
    CHECK_EQ(apply("hwlat:width=99999999999999999999999", v), 1);   /* overflow */
    CHECK(v[0] == 500);
    CHECK_EQ(warned, 1);
    return check_summary("test_wlargs");
}
