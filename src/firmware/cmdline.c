/* cmdline.c — parse key[=value] words from the multiboot2 command line:
 * each word's key picks a row of cmdline.def, whose kind reads the value
 * and whose facts (range, names, default) make the `cmdline:` message. */
#include "firmware/cmdline.h"
#include "lib/format.h"
#include "lib/kstring.h"

#define WORD_MAX 128
#define FIELD(f) (((struct boot_config *)0)->f)

#define CMDLINE_OPT(name, KIND, field, lo, hi, init, values, dflt, arg, help)                 \
    { name, CMDLINE_##KIND, offsetof(struct boot_config, field), sizeof FIELD(field), lo, hi, \
      init, values, dflt },
const struct cmdline_option cmdline_options[] = {
#include "firmware/cmdline.def"
};
#undef CMDLINE_OPT
const unsigned cmdline_option_count = sizeof cmdline_options / sizeof cmdline_options[0];

/* ENUM rows store the index of the name, BITS rows bit i for the i-th:
 * the names in cmdline.def are in the order of these constants. */
_Static_assert(CMDLINE_ON_FAULT_DUMP == 0 && CMDLINE_ON_FAULT_FREEZE == 1 &&
                   CMDLINE_ON_FAULT_OFF == 2,
               "trace.on_fault=dump,freeze,off");
_Static_assert(CMDLINE_KEYBOARD_BOTH == 0 && CMDLINE_KEYBOARD_LEGACY == 1 &&
                   CMDLINE_KEYBOARD_USB == 2,
               "keyboard=both,legacy,usb");
_Static_assert(DUMP_TO_SERIAL == 1 && DUMP_TO_STICK == 2 && DUMP_TO_NET == 4,
               "trace.dump_to=serial,stick,net");
_Static_assert(CMDLINE_USB_UHCI == 1 && CMDLINE_USB_OHCI == 2 && CMDLINE_USB_EHCI == 4 &&
                   CMDLINE_USB_XHCI == 8,
               "usb.skip=uhci,ohci,ehci,xhci");

/* store() writes 1, 2, 4 or 8 bytes; TEXT rows are character arrays. */
#define WRITABLE(n) ((n) == 1 || (n) == 2 || (n) == 4 || (n) == 8)
#define CMDLINE_OPT(name, KIND, field, ...)                                        \
    _Static_assert(CMDLINE_##KIND == CMDLINE_TEXT ? sizeof FIELD(field) > 1        \
                                                  : WRITABLE(sizeof FIELD(field)), \
                   name ": a field of a size the parser writes");
#include "firmware/cmdline.def"
#undef CMDLINE_OPT

/* Put v in o's field, as wide as the field is. */
static void store(struct boot_config *cfg, const struct cmdline_option *o, uint64_t v)
{
    uint8_t *at = (uint8_t *)cfg + o->offset;
    uint8_t b = (uint8_t)v;
    uint16_t h = (uint16_t)v;
    uint32_t w = (uint32_t)v;
    switch (o->size) {
    case 1:  memcpy(at, &b, 1); break;
    case 2:  memcpy(at, &h, 2); break;
    case 4:  memcpy(at, &w, 4); break;
    default: memcpy(at, &v, 8);
    }
    if (o->offset == offsetof(struct boot_config, timer_hz))
        cfg->timer_hz_given = true;     /* timer_fit never lowers a rate given */
}

void cmdline_defaults(struct boot_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (unsigned i = 0; i < cmdline_option_count; i++)
        if (cmdline_options[i].kind != CMDLINE_TEXT)
            store(cfg, &cmdline_options[i], cmdline_options[i].init);
}

const char *cmdline_cpu_never_runs(uint32_t cpu, uint32_t found, uint32_t started, bool online)
{
    if (cpu == 0)
        return "CPU 0 is the boot CPU, which serves the keys and never runs it";
    if (cpu >= found)
        return "no such CPU";
    if (cpu >= started)
        return "that CPU is parked (maxcpus=, nosmp or MAX_CPUS)";
    return online ? NULL : "that CPU did not start";
}

/* The i-th name of a comma-separated list into buf (empty past the end). */
static void nth_name(const char *names, uint64_t i, char *buf, size_t size)
{
    for (; i && *names; names++)
        i -= *names == ',';
    size_t n = 0;
    while (names[n] && names[n] != ',')
        n++;
    ksnprintf(buf, size, "%.*s", (int)n, names);
}

/* Which name of the comma-separated list s[0..n) is, or -1. */
static int name_index(const char *names, const char *s, size_t n)
{
    for (int i = 0; *names; i++) {
        size_t len = 0;
        while (names[len] && names[len] != ',')
            len++;
        if (len == n && !strncmp(names, s, n))
            return i;
        names += len + (names[len] == ',');
    }
    return -1;
}

/* "a,b,c" -> "a, b or c" (last_sep " or "), or "a, b, c or a list of them". */
static void name_list(const char *names, const char *last_sep, char *buf, size_t size)
{
    size_t at = 0, count = 0;
    for (const char *p = names; *p; p++)
        count += *p == ',';
    char name[32];
    for (size_t i = 0; i <= count && at < size; i++) {
        nth_name(names, i, name, sizeof name);
        const char *sep = i < count ? ", " : last_sep;
        at += (size_t)ksnprintf(buf + at, size - at, "%s%s", i ? sep : "", name);
    }
}

/* 64K, 1024G, 1000: a byte count in the largest binary unit that divides it. */
static void size_text(uint64_t bytes, char *buf, size_t size)
{
    static const char units[] = "GMK";
    for (unsigned i = 0; i < 3; i++) {
        unsigned shift = 30 - 10 * i;
        if (bytes && !(bytes & ((1ull << shift) - 1))) {
            ksnprintf(buf, size, "%llu%c", (unsigned long long)(bytes >> shift), units[i]);
            return;
        }
    }
    ksnprintf(buf, size, "%llu", (unsigned long long)bytes);
}

void cmdline_accepts(const struct cmdline_option *o, char *buf, size_t size)
{
    char lo[24], hi[24];
    unsigned long long l = o->lo, h = o->hi;
    switch (o->kind) {
    case CMDLINE_FLAG: ksnprintf(buf, size, "%s alone, no value", o->name); return;
    case CMDLINE_OFF:  ksnprintf(buf, size, "%s=off", o->name); return;
    case CMDLINE_UINT: ksnprintf(buf, size, "a number from %llu to %llu", l, h); return;
    case CMDLINE_POW2: ksnprintf(buf, size, "a power of two from %llu to %llu", l, h); return;
    case CMDLINE_SIZE:
        size_text(o->lo, lo, sizeof lo);
        size_text(o->hi, hi, sizeof hi);
        ksnprintf(buf, size, "a size like 64M or 1G, %s to %s", lo, hi);
        return;
    case CMDLINE_TEXT: ksnprintf(buf, size, "1 to %u characters", o->size - 1u); return;
    case CMDLINE_ENUM: name_list(o->values, " or ", buf, size); return;
    case CMDLINE_BITS:
        name_list(o->values, ", ", buf, size);
        ksnprintf(buf + strlen(buf), size - strlen(buf), " or a list of them");
        return;
    default: /* a parser of its own: its words, then the range of its number */
        ksnprintf(buf, size, h ? "%s %llu..%llu" : "%s", o->values, l, h);
    }
}

void cmdline_default(const struct cmdline_option *o, char *buf, size_t size)
{
    if (*o->dflt)
        ksnprintf(buf, size, "%s", o->dflt);
    else if (o->kind == CMDLINE_FLAG || o->kind == CMDLINE_OFF)
        ksnprintf(buf, size, "%s", "");
    else if (o->kind == CMDLINE_UINT || o->kind == CMDLINE_POW2)
        ksnprintf(buf, size, "%llu", (unsigned long long)o->init);
    else if (o->kind == CMDLINE_ENUM)
        nth_name(o->values, o->init, buf, size);
    else
        ksnprintf(buf, size, "none");
}

static void warn(struct boot_config *cfg, const char *word, const char *what)
{
    if (cfg->warning_count == CMDLINE_MAX_WARNINGS) {
        /* Full: the last slot becomes the count of what did not fit. */
        cfg->warnings_cut++;
        ksnprintf(cfg->warnings[CMDLINE_MAX_WARNINGS - 1], CMDLINE_WARNING_LEN,
                  "cmdline: ... (%u more)", cfg->warnings_cut + 1);
        return;
    }
    /* At most 40 characters of the word, so the reason always fits. */
    ksnprintf(cfg->warnings[cfg->warning_count++], CMDLINE_WARNING_LEN,
              "cmdline: %.40s%s: %s", word, strlen(word) > 40 ? "..." : "", what);
}

/* "WHY; using DEFAULT" for kinds whose bad value leaves the default in
 * effect, "WHY; ignored" for lists, words and flags. */
static void refuse(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                   const char *why)
{
    static const uint16_t falls_back = 1u << CMDLINE_UINT | 1u << CMDLINE_POW2 |
                                       1u << CMDLINE_SIZE | 1u << CMDLINE_ENUM |
                                       1u << CMDLINE_CONSOLE | 1u << CMDLINE_NET_TO |
                                       1u << CMDLINE_NET_IP;
    char dflt[48], msg[CMDLINE_WARNING_LEN];
    cmdline_default(o, dflt, sizeof dflt);
    if (falls_back >> o->kind & 1)
        ksnprintf(msg, sizeof msg, "%s; using %s", why, dflt);
    else
        ksnprintf(msg, sizeof msg, "%s; ignored", why);
    warn(cfg, word, msg);
}

/* "want <what o takes>; using <default>" */
static void want(struct boot_config *cfg, const struct cmdline_option *o, const char *word)
{
    char takes[CMDLINE_WARNING_LEN], why[CMDLINE_WARNING_LEN];
    cmdline_accepts(o, takes, sizeof takes);
    ksnprintf(why, sizeof why, "want %s", takes);
    refuse(cfg, o, word, why);
}

/* Decimal number with no sign or junk; false on anything else or overflow. */
static bool parse_u32(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > 0xFFFFFFFFu)
            return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* A decimal s[0..n) in o's lo..hi. */
static bool in_range(const struct cmdline_option *o, const char *s, size_t n, uint32_t *v)
{
    char digits[12];
    if (n >= sizeof digits)
        return false;
    memcpy(digits, s, n);
    digits[n] = '\0';
    return parse_u32(digits, v) && *v >= o->lo && *v <= o->hi;
}

/* The first stop character in s, or its end. */
static size_t span_to(const char *s, char stop)
{
    size_t n = 0;
    while (s[n] && s[n] != stop)
        n++;
    return n;
}

static void opt_flag(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                     const char *val)
{
    if (val)
        want(cfg, o, word);
    else
        store(cfg, o, 1);
}

static void opt_off(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                    const char *val)
{
    if (strcmp(val, "off"))
        want(cfg, o, word);
    else
        store(cfg, o, 1);
}

static void opt_uint(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                     const char *val)
{
    uint32_t v;
    if (!in_range(o, val, strlen(val), &v))
        want(cfg, o, word);
    else if (o->kind == CMDLINE_POW2 && (v & (v - 1)))
        refuse(cfg, o, word, "not a power of two");
    else
        store(cfg, o, v);
}

/* <n>[K|M|G]: bytes in binary units (64M = 64 MiB). */
static void opt_size(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                     const char *val)
{
    size_t n = strlen(val);
    char last = n ? val[n - 1] : '\0';
    unsigned shift = 0;
    if (last == 'K' || last == 'k')
        shift = 10;
    else if (last == 'M' || last == 'm')
        shift = 20;
    else if (last == 'G' || last == 'g')
        shift = 30;
    char digits[24];
    uint32_t v;
    n -= shift != 0;
    bool ok = n > 0 && n < sizeof digits;
    if (ok) {
        memcpy(digits, val, n);
        digits[n] = '\0';
        ok = parse_u32(digits, &v);
    }
    uint64_t bytes = ok ? (uint64_t)v << shift : 0;
    if (!ok || bytes < o->lo || bytes > o->hi)
        want(cfg, o, word);
    else
        store(cfg, o, bytes);
}

static void opt_text(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                     const char *val)
{
    size_t n = strlen(val);
    if (!n || n >= o->size)
        want(cfg, o, word);
    else
        memcpy((char *)cfg + o->offset, val, n + 1);
}

static void opt_enum(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                     const char *val)
{
    int i = name_index(o->values, val, strlen(val));
    if (i < 0)
        want(cfg, o, word);
    else
        store(cfg, o, (uint64_t)i);
}

/* A comma-separated list of the row's names: bit i for the i-th. */
static void opt_bits(struct boot_config *cfg, const struct cmdline_option *o, const char *word,
                     const char *val)
{
    uint64_t bits = 0;
    for (const char *p = val; *p;) {
        size_t n = span_to(p, ',');
        int i = name_index(o->values, p, n);
        if (i < 0)
            break;
        bits |= 1ull << i;
        p += n + (p[n] == ',');
        if (!*p) {
            store(cfg, o, bits);
            return;
        }
    }
    want(cfg, o, word);
}

/* Hex digits (at most `max`, none after them but `stop` or the end). */
static const char *parse_hex(const char *s, unsigned max, char stop, uint64_t *out)
{
    uint64_t v = 0;
    unsigned n = 0;
    for (; *s && *s != stop; s++, n++) {
        char c = *s;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16 || n == max)
            return NULL;
        v = v << 4 | d;
    }
    *out = v;
    return n ? s : NULL;
}

struct bdf {
    uint8_t bus, dev, fn, port;
};

/* "BB:DD.F[/N]" -> bus, device (< 32), function (< 8), port N of a
 * multi-port card (< CMDLINE_PCI_PORTS, default 0); ends at ',' or NUL. */
static const char *parse_bdf(const char *s, struct bdf *out)
{
    uint64_t bus, dev;
    uint32_t port = 0;
    if (!(s = parse_hex(s, 2, ':', &bus)) || *s != ':' ||
        !(s = parse_hex(s + 1, 2, '.', &dev)) || *s != '.' || dev > 31 ||
        !(s[1] >= '0' && s[1] <= '7'))
        return NULL;
    out->fn = (uint8_t)(s[1] - '0');
    s += 2;
    if (*s == '/') {
        char digits[4] = { 0 };
        unsigned n = 0;
        for (s++; *s >= '0' && *s <= '9' && n < sizeof digits - 1; s++)
            digits[n++] = *s;
        if (!n || !parse_u32(digits, &port) || port >= CMDLINE_PCI_PORTS)
            return NULL;
    }
    out->bus = (uint8_t)bus;
    out->dev = (uint8_t)dev;
    out->port = (uint8_t)port;
    return s;
}

/* What console= names, before it is taken. */
struct uart_choice {
    uint8_t kind;                      /* enum console_kind */
    unsigned port;
    bool pci_any;
    struct bdf pci;
    uint64_t mmio;
};

/* The UART part of console=: returns where an optional ",baud" may
 * follow, NULL when the value is not one we know. */
static const char *console_uart(struct uart_choice *u, const char *val)
{
    if (!strncmp(val, "auto", 4) && (!val[4] || val[4] == ',')) {
        u->kind = CONSOLE_AUTO;
        return val + 4;
    }
    if (!strncmp(val, "ttyS", 4) && val[4] >= '0' && val[4] <= '3') {
        u->kind = CONSOLE_TTYS;
        u->port = (unsigned)(val[4] - '0');
        return val + 5;
    }
    if (!strncmp(val, "pci", 3) && (!val[3] || val[3] == ',' || val[3] == ':')) {
        u->kind = CONSOLE_PCI;
        u->pci_any = val[3] != ':';
        return val[3] == ':' ? parse_bdf(val + 4, &u->pci) : val + 3;
    }
    if (!strncmp(val, "mmio,0x", 7) && (val = parse_hex(val + 7, 12, ',', &u->mmio))) {
        u->kind = CONSOLE_MMIO;
        return val;
    }
    return NULL;
}

/* Why ",baud" (at `rest`) cannot be used with u, or NULL; buf for the words. */
static const char *bad_baud(const struct cmdline_option *o, const struct uart_choice *u,
                            const char *rest, uint32_t *baud, char *buf, size_t size)
{
    if (!*rest)
        return NULL;
    if (u->kind == CONSOLE_AUTO)
        return "auto takes no baud (SPCR's rate, else 115200)";
    if (!parse_u32(rest + 1, baud) || *baud > o->hi || (*baud && o->hi % *baud)) {
        ksnprintf(buf, size, "baud must divide %llu", (unsigned long long)o->hi);
        return buf;
    }
    if (*baud >= o->lo)
        return NULL;
    ksnprintf(buf, size, "baud %u is below the lowest rate, %llu (16-bit divisor)", *baud,
              (unsigned long long)o->lo);
    return buf;
}

static void opt_console(struct boot_config *cfg, const struct cmdline_option *o,
                        const char *word, const char *val)
{
    struct uart_choice u = { 0 };
    uint32_t baud = (uint32_t)o->init;
    char buf[CMDLINE_WARNING_LEN];
    const char *rest = console_uart(&u, val);
    const char *why = !rest || (*rest && *rest != ',') ? NULL
                      : u.kind == CONSOLE_MMIO && !u.mmio
                          ? "address 0 is refused (no UART sits at physical address 0)"
                          : bad_baud(o, &u, rest, &baud, buf, sizeof buf);
    cfg->console_kind = CONSOLE_AUTO;
    if (!rest || (*rest && *rest != ','))
        want(cfg, o, word);
    else if (why)
        refuse(cfg, o, word, why);
    else {
        cfg->console_kind = u.kind;
        cfg->console_port = u.port;
        cfg->console_pci_any = u.pci_any;
        cfg->console_pci_bus = u.pci.bus;
        cfg->console_pci_dev = u.pci.dev;
        cfg->console_pci_fn = u.pci.fn;
        cfg->console_pci_port = u.pci.port;
        cfg->console_mmio = u.mmio;
        cfg->console_baud = baud;
    }
}

/* One usb.skip= item, `n` bytes at p: a kind or pci:BB:DD.F. */
static bool usb_skip_item(struct boot_config *c, const struct cmdline_option *o, const char *p,
                          size_t n)
{
    int kind = name_index("uhci,ohci,ehci,xhci", p, n);   /* the CMDLINE_USB_* bits' order */
    if (kind >= 0) {
        c->usb_skip_kinds |= 1u << kind;
        return true;
    }
    char item[16];
    struct bdf b;
    if (n < 5 || n >= sizeof item || strncmp(p, "pci:", 4) || c->usb_skip_count >= o->hi)
        return false;
    memcpy(item, p + 4, n - 4);
    item[n - 4] = 0;
    const char *end = parse_bdf(item, &b);
    if (!end || *end || b.port)
        return false;
    c->usb_skip[c->usb_skip_count].bus = b.bus;
    c->usb_skip[c->usb_skip_count].dev = b.dev;
    c->usb_skip[c->usb_skip_count++].fn = b.fn;
    return true;
}

static void opt_usb_skip(struct boot_config *cfg, const struct cmdline_option *o,
                         const char *word, const char *val)
{
    unsigned kinds = cfg->usb_skip_kinds, count = cfg->usb_skip_count;
    for (const char *p = val; *p;) {
        size_t n = span_to(p, ',');
        if (!usb_skip_item(cfg, o, p, n) || (p[n] == ',' && !p[n + 1]))
            break;
        p += n + (p[n] == ',');
        if (!*p)
            return;
    }
    cfg->usb_skip_kinds = kinds;                  /* all of the list or none of it */
    cfg->usb_skip_count = count;
    want(cfg, o, word);
}

/* WxH: the mode grub.cfg asks GRUB for (the kernel only checks what it
 * was given). */
static void opt_screen(struct boot_config *cfg, const struct cmdline_option *o,
                       const char *word, const char *val)
{
    uint32_t width, height;
    size_t n = span_to(val, 'x');
    if (!val[n] || !in_range(o, val, n, &width) ||
        !in_range(o, val + n + 1, strlen(val + n + 1), &height)) {
        want(cfg, o, word);
        return;
    }
    cfg->screen_w = width;
    cfg->screen_h = height;
}

/* "A.B.C.D" (each 0..255, no leading junk) from s[0..n). */
static bool parse_ipv4(const char *s, size_t n, uint32_t *ip)
{
    uint32_t v = 0;
    size_t at = 0;
    for (int part = 0; part < 4; part++) {
        unsigned b = 0, digits = 0;
        while (at < n && s[at] >= '0' && s[at] <= '9' && digits < 4) {
            b = b * 10 + (unsigned)(s[at++] - '0');
            digits++;
        }
        if (!digits || digits > 3 || b > 255)
            return false;
        v = v << 8 | b;
        if (part < 3 && (at >= n || s[at++] != '.'))
            return false;
    }
    *ip = v;
    return at == n;
}

/* A.B.C.D[<sep>N], N in o's lo..hi: false when it is not that. */
static bool ip_and_number(const struct cmdline_option *o, const char *val, char sep,
                          uint32_t *ip, uint32_t *num)
{
    size_t n = span_to(val, sep);
    return parse_ipv4(val, n, ip) && *ip &&
           (!val[n] || in_range(o, val + n + 1, strlen(val + n + 1), num));
}

static void opt_net_to(struct boot_config *cfg, const struct cmdline_option *o,
                       const char *word, const char *val)
{
    uint32_t ip, port = 0;
    if (!ip_and_number(o, val, ':', &ip, &port)) {
        want(cfg, o, word);
        return;
    }
    cfg->net_to_ip = ip;
    cfg->net_to_port = (uint16_t)port;
}

static void opt_net_ip(struct boot_config *cfg, const struct cmdline_option *o,
                       const char *word, const char *val)
{
    uint32_t ip, prefix = 24;
    if (!ip_and_number(o, val, '/', &ip, &prefix) || ip == 0xFFFFFFFFu) {
        want(cfg, o, word);
        return;
    }
    cfg->net_ip = ip;
    cfg->net_mask = 0xFFFFFFFFu << (32 - prefix);
}

typedef void opt_parser(struct boot_config *cfg, const struct cmdline_option *o,
                        const char *word, const char *val);
static opt_parser *const parsers[] = {
    [CMDLINE_FLAG] = opt_flag,
    [CMDLINE_OFF] = opt_off,
    [CMDLINE_UINT] = opt_uint,
    [CMDLINE_POW2] = opt_uint,
    [CMDLINE_SIZE] = opt_size,
    [CMDLINE_TEXT] = opt_text,
    [CMDLINE_ENUM] = opt_enum,
    [CMDLINE_BITS] = opt_bits,
    [CMDLINE_CONSOLE] = opt_console,
    [CMDLINE_USB_SKIP] = opt_usb_skip,
    [CMDLINE_SCREEN] = opt_screen,
    [CMDLINE_NET_TO] = opt_net_to,
    [CMDLINE_NET_IP] = opt_net_ip,
};
_Static_assert(sizeof parsers / sizeof parsers[0] == CMDLINE_NET_IP + 1, "a parser per kind");

/* key[=value]: the row named key reads value (a FLAG gets NULL for none,
 * the others ""). */
static void apply(struct boot_config *cfg, const char *word)
{
    size_t klen = span_to(word, '=');
    const char *val = word[klen] ? word + klen + 1 : NULL;
    for (unsigned i = 0; i < cmdline_option_count; i++) {
        const struct cmdline_option *o = &cmdline_options[i];
        if (strlen(o->name) == klen && !strncmp(word, o->name, klen)) {
            parsers[o->kind](cfg, o, word, val || o->kind == CMDLINE_FLAG ? val : "");
            return;
        }
    }
    warn(cfg, word, "unknown option; ignored");
}

void cmdline_parse(const char *line, struct boot_config *cfg)
{
    char word[WORD_MAX];
    while (line && *line) {
        while (*line == ' ' || *line == '\t') line++;
        size_t n = 0;
        bool too_long = false;
        while (*line && *line != ' ' && *line != '\t') {
            if (n + 1 < sizeof word) word[n++] = *line;
            else too_long = true;
            line++;
        }
        word[n] = '\0';
        if (too_long)
            warn(cfg, word, "word too long; ignored");
        else if (n)
            apply(cfg, word);
    }
}
