/* wlargs.c — parse NAME:KEY=VALUE,... (see wlargs.h). */
#include "lab/wlargs.h"
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

/* One KEY=VALUE pair, s[0..n). */
static bool apply_pair(const char *name, size_t name_len, const char *s, size_t n,
                       const struct wl_param *params, uint64_t *values,
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

unsigned wlargs_apply(const char *text, const struct wl_param *params, uint64_t *values,
                      wl_warn_fn warn, void *ctx)
{
    unsigned warnings = 0;
    for (int i = 0; params[i].key; i++)
        values[i] = params[i].dflt;
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
        if (n && !apply_pair(text, name_len, s, n, params, values, warn, ctx))
            warnings++;
        s += n;
        if (*s == ',')
            s++;
    }
    return warnings;
}
