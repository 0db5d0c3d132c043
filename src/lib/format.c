/* format.c — a small vsnprintf. */
#include "lib/format.h"
#include <stdbool.h>
#include <stdint.h>

struct out {
    char *buf;
    size_t size, len;
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void pad(struct out *o, char c, int n)
{
    while (n-- > 0)
        put(o, c);
}

struct spec {
    bool left, zero;
    int width, prec;
};

static void put_str(struct out *o, const char *s, const struct spec *sp)
{
    int n = 0;
    if (!s) s = "(null)";
    while (s[n] && (sp->prec < 0 || n < sp->prec)) n++;
    if (!sp->left) pad(o, ' ', sp->width - n);
    for (int i = 0; i < n; i++) put(o, s[i]);
    if (sp->left) pad(o, ' ', sp->width - n);
}

static void put_num(struct out *o, uint64_t v, bool neg, unsigned base, bool upper,
                    const struct spec *sp)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v);
    int len = n + (neg ? 1 : 0);
    if (sp->left) {
        if (neg) put(o, '-');
        while (n) put(o, tmp[--n]);
        pad(o, ' ', sp->width - len);
        return;
    }
    if (sp->zero) {
        if (neg) put(o, '-');
        pad(o, '0', sp->width - len);
    } else {
        pad(o, ' ', sp->width - len);
        if (neg) put(o, '-');
    }
    while (n) put(o, tmp[--n]);
}

static const char *parse_spec(const char *f, struct spec *sp, va_list *ap)
{
    sp->left = sp->zero = false;
    sp->width = 0;
    sp->prec = -1;
    for (;; f++) {
        if (*f == '-') sp->left = true;
        else if (*f == '0') sp->zero = true;
        else break;
    }
    if (*f == '*') {
        sp->width = va_arg(*ap, int);
        f++;
    }
    while (*f >= '0' && *f <= '9') sp->width = sp->width * 10 + (*f++ - '0');
    if (*f == '.') {
        sp->prec = 0;
        f++;
        if (*f == '*') {
            sp->prec = va_arg(*ap, int);
            f++;
        }
        while (*f >= '0' && *f <= '9') sp->prec = sp->prec * 10 + (*f++ - '0');
    }
    return f;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = { buf, size, 0 };
    va_list args;
    va_copy(args, ap);
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            put(&o, *f);
            continue;
        }
        struct spec sp;
        f = parse_spec(f + 1, &sp, &args);
        int lng = 0;
        while (*f == 'l' || *f == 'z') {
            lng++;
            f++;
        }
        uint64_t u;
        int64_t s;
        switch (*f) {
        case 'd':
        case 'i':
            s = lng ? va_arg(args, int64_t) : va_arg(args, int);
            put_num(&o, s < 0 ? -(uint64_t)s : (uint64_t)s, s < 0, 10, false, &sp);
            break;
        case 'u':
        case 'x':
        case 'X':
        case 'o':
            u = lng ? va_arg(args, uint64_t) : va_arg(args, unsigned);
            put_num(&o, u, false, *f == 'u' ? 10 : *f == 'o' ? 8
                                                             : 16,
                    *f == 'X', &sp);
            break;
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uintptr_t)va_arg(args, void *), false, 16, false, &sp);
            break;
        case 'c': {
            char c[2] = { (char)va_arg(args, int), 0 };
            put_str(&o, c, &sp);
            break;
        }
        case 's':
            put_str(&o, va_arg(args, const char *), &sp);
            break;
        case '%':
            put(&o, '%');
            break;
        case '\0':
            f--;
            break;
        default:
            put(&o, '%');
            put(&o, *f);
        }
    }
    va_end(args);
    if (size)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

size_t kappendf(char *buf, size_t size, size_t at, const char *fmt, ...)
{
    if (!size)
        return 0;
    if (at >= size)
        at = size - 1;
    va_list args;
    va_start(args, fmt);
    int n = kvsnprintf(buf + at, size - at, fmt, args);
    va_end(args);
    size_t end = at + (n > 0 ? (size_t)n : 0);
    return end < size ? end : size - 1;
}
