/* wlargs.c — parse NAME:KEY=VALUE,... (see wlargs.h). */
#include "perf/wlargs.h"
#include "lib/format.h"
#include "lib/kstring.h"

#define MSG_MAX 160

bool wlargs_name(const char *text, char *name, size_t cap)
{
    size_t n = 0;
    while (text[n] && text[n] != ':')
        n++;
    if (n == 0 || n >= cap)
        return false;
    memcpy(name, text, n);
    name[n] = '\0';
    return true;
}

/* Decimal digits only, no overflow. */
static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static int find(const struct wl_param *params, const char *key, size_t n)
{
    for (int i = 0; params[i].key; i++)
        if (strlen(params[i].key) == n && !strncmp(params[i].key, key, n))
            return i;
    return -1;
}

static void known_keys(const struct wl_param *params, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; params[i].key && at < cap; i++)
        at += (size_t)ksnprintf(buf + at, cap - at, "%s%s", i ? " " : "", params[i].key);
}

/* "0-15", "0,8,16-23" (s[0..n)) into *set and how many CPUs into *count;
 * NULL, or what is wrong with it (why[] holds the words). */
static const char *parse_cpu_list(const char *s, size_t n, struct wl_cpus *set,
                                  uint64_t *count, char *why, size_t cap)
{
    memset(set, 0, sizeof *set);
    *count = 0;
    for (size_t at = 0; at <= n;) {
        size_t end = at, dash = n;
        while (end < n && s[end] != ',') {
            if (s[end] == '-' && dash == n)
                dash = end;
            end++;
        }
        uint64_t lo, hi;
        bool ok = parse_u64(s + at, (dash < end ? dash : end) - at, &lo);
        hi = lo;
        if (ok && dash < end)
            ok = parse_u64(s + dash + 1, end - dash - 1, &hi);
        if (!ok)
            return "wants CPU numbers like 0-15 or 0,8,16-23";
        if (lo > hi) {
            ksnprintf(why, cap, "has the range %lu-%lu, which runs backwards (write %lu-%lu)",
                      lo, hi, hi, lo);
            return why;
        }
        if (hi >= MAX_CPUS) {
            ksnprintf(why, cap, "names CPU %lu; CPU numbers are below %u", hi,
                      (unsigned)MAX_CPUS);
            return why;
        }
        for (uint64_t c = lo; c <= hi; c++)
            if (!wl_cpus_has(set, (uint32_t)c)) {
                set->bits[c / 64] |= 1ull << (c % 64);
                (*count)++;
            }
        at = end + 1;
    }
    return NULL;
}

/* One KEY=VALUE pair, s[0..n). */
static bool apply_pair(const char *name, size_t name_len, const char *s, size_t n,
                       const struct wl_param *params, uint64_t *values, struct wl_cpus *cpus,
                       wl_warn_fn warn, void *ctx)
{
    char msg[MSG_MAX], keys[MSG_MAX / 2];
    size_t k = 0;
    while (k < n && s[k] != '=')
        k++;
    int i = k < n ? find(params, s, k) : -1;
    if (i < 0) {
        known_keys(params, keys, sizeof keys);
        ksnprintf(msg, sizeof msg, "workload: %.*s: unknown parameter '%.*s' (known: %s); ignored",
                  (int)name_len, name, (int)(k < 40 ? k : 40), s, keys[0] ? keys : "none");
        warn(ctx, msg);
        return false;
    }
    uint64_t v;
    const struct wl_param *p = &params[i];
    if (p->cpu_list) {
        struct wl_cpus set;
        char why[MSG_MAX / 2];
        const char *bad = cpus ? parse_cpu_list(s + k + 1, n - k - 1, &set, &v, why, sizeof why)
                               : "is not taken here";
        if (bad) {
            ksnprintf(msg, sizeof msg, "workload: %.*s: %.*s %s; using the default CPUs",
                      (int)name_len, name, (int)(n < 40 ? n : 40), s, bad);
            warn(ctx, msg);
            return false;
        }
        *cpus = set;
        values[i] = v;
        return true;
    }
    if (!parse_u64(s + k + 1, n - k - 1, &v) || v < p->min || v > p->max) {
        ksnprintf(msg, sizeof msg, "workload: %.*s: %.*s wants a number from %lu to %lu%s; using %lu",
                  (int)name_len, name, (int)(n < 40 ? n : 40), s, p->min, p->max, p->unit,
                  p->dflt);
        warn(ctx, msg);
        return false;
    }
    values[i] = v;
    return true;
}

/* Whether s[0..n) (a pair without its ',') is KEY=... of a cpu_list key. */
static bool is_list_pair(const char *s, size_t n, const struct wl_param *params)
{
    size_t k = 0;
    while (k < n && s[k] != '=')
        k++;
    int i = k < n ? find(params, s, k) : -1;
    return i >= 0 && params[i].cpu_list;
}

unsigned wlargs_apply(const char *text, const struct wl_param *params, uint64_t *values,
                      struct wl_cpus *cpus, wl_warn_fn warn, void *ctx)
{
    unsigned warnings = 0;
    for (int i = 0; params[i].key; i++)
        values[i] = params[i].dflt;
    if (cpus)
        memset(cpus, 0, sizeof *cpus);
    size_t name_len = 0;
    while (text[name_len] && text[name_len] != ':')
        name_len++;
    if (!text[name_len])
        return 0;
    const char *s = text + name_len + 1;
    while (*s) {
        size_t n = 0;
        while (s[n] && s[n] != ',')
            n++;
        /* A CPU list goes on over ",<digit>" (cpus=0,8,16-23). */
        while (s[n] == ',' && s[n + 1] >= '0' && s[n + 1] <= '9' && is_list_pair(s, n, params))
            for (n++; s[n] && s[n] != ','; n++);
        if (n && !apply_pair(text, name_len, s, n, params, values, cpus, warn, ctx))
            warnings++;
        s += n;
        if (*s == ',')
            s++;
    }
    return warnings;
}
