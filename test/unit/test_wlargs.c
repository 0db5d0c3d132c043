/* test_wlargs.c — workload= text: NAME[:KEY=VALUE,...] (src/perf/wlargs.c). */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "perf/wlargs.h"

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

/* cpus=LIST: numbers and ranges; a comma then a digit goes on with the
 * list, any other comma starts the next pair. */
static const struct wl_param pair_params[] = {
    { "samples", "", 16, 1, 256, false },
    { "cpus", "", 0, 0, 0, true },
    { NULL, NULL, 0, 0, 0, false },
};

static unsigned apply_cpus(const char *text, uint64_t *v, struct wl_cpus *cpus)
{
    warned = 0;
    last[0] = '\0';
    return wlargs_apply(text, pair_params, v, cpus, warn, NULL);
}

static unsigned count(const struct wl_cpus *c)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < MAX_CPUS + 8; i++)
        n += wl_cpus_has(c, i);
    return n;
}

static void test_cpu_lists(void)
{
    uint64_t v[WL_MAX_PARAMS];
    struct wl_cpus c;
    CHECK_EQ(apply_cpus("c2c", v, &c), 0);
    CHECK(v[0] == 16 && v[1] == 0 && count(&c) == 0);              /* not given */
    CHECK_EQ(apply_cpus("c2c:cpus=0-15", v, &c), 0);
    CHECK(v[1] == 16 && count(&c) == 16 && wl_cpus_has(&c, 0) && wl_cpus_has(&c, 15));
    CHECK(!wl_cpus_has(&c, 16));
    CHECK_EQ(apply_cpus("c2c:cpus=0,8,16-23,samples=4", v, &c), 0);
    CHECK(v[0] == 4 && v[1] == 10 && count(&c) == 10);
    CHECK(wl_cpus_has(&c, 8) && wl_cpus_has(&c, 23) && !wl_cpus_has(&c, 7));
    CHECK_EQ(apply_cpus("c2c:samples=2,cpus=5", v, &c), 0);
    CHECK(v[0] == 2 && v[1] == 1 && wl_cpus_has(&c, 5));
    CHECK_EQ(apply_cpus("c2c:cpus=3-3,3,0-1", v, &c), 0);          /* repeats count once */
    CHECK(v[1] == 3 && count(&c) == 3);
    char top[32];
    snprintf(top, sizeof top, "c2c:cpus=%u", MAX_CPUS - 1);
    CHECK_EQ(apply_cpus(top, v, &c), 0);
    CHECK(v[1] == 1 && wl_cpus_has(&c, MAX_CPUS - 1));
    /* Each refused list with its real reason (issue 28: 5-2 is not "below 1024"). */
    /* clang-format off */
    static const char *const bad[][2] = {
        { "c2c:cpus=", "wants CPU numbers like 0-15" },
        { "c2c:cpus=5-3", "cpus=5-3 has the range 5-3, which runs backwards (write 3-5)" },
        { "c2c:cpus=0,9-2", "has the range 9-2, which runs backwards" },
        { "c2c:cpus=-4", "wants CPU numbers like" }, { "c2c:cpus=0-", "wants CPU numbers like" },
        { "c2c:cpus=a", "wants CPU numbers like" },
        { "c2c:cpus=0-99999999999999999999", "wants CPU numbers like" },
        { "c2c:cpus=1,2-x", "wants CPU numbers like" },
        { "c2c:cpus=0-1024", "names CPU 1024; CPU numbers are below 1024" },
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(apply_cpus(bad[i][0], v, &c), 1);
        CHECK(v[1] == 0 && count(&c) == 0);                        /* the default */
        CHECK(strstr(last, bad[i][1]) && strstr(last, "using the default CPUs"));
    }
    snprintf(top, sizeof top, "c2c:cpus=0-%u", MAX_CPUS);
    CHECK_EQ(apply_cpus(top, v, &c), 1);                           /* past the ceiling */
    CHECK_EQ(apply_cpus("c2c:cpus=1,,2", v, &c), 1);               /* ',,' ends the list */
    CHECK(v[1] == 1 && strstr(last, "unknown parameter '2'"));
    CHECK_EQ(apply_cpus("c2c:cpus=1,x=2", v, &c), 1);              /* the list ends at ',x' */
    CHECK(v[1] == 1 && wl_cpus_has(&c, 1) && strstr(last, "unknown parameter 'x'"));
    /* Without a CPU-list parameter, a digit after a comma is a pair as before. */
    CHECK_EQ(apply("hwlat:width=5,7", v), 1);
    CHECK(v[0] == 5);
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
    test_cpu_lists();
    return check_summary("test_wlargs");
}
