/* cmdline.c — parse key[=value] words from the multiboot2 command line. */
#include "firmware/cmdline.h"
#include "lib/format.h"
#include "lib/kstring.h"

#define WORD_MAX 128

void cmdline_defaults(struct boot_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->console_baud = 115200;
    cfg->timer_hz = DEFAULT_TIMER_HZ;
    cfg->trace_events = DEFAULT_TRACE_EVENTS;
    cfg->fault_cpu = -1;
    cfg->hang_cpu = -1;
    cfg->usb_setup_ms = CMDLINE_USB_SETUP_MS;
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

static bool parse_range(struct boot_config *cfg, const char *word, const char *val,
                        uint32_t lo, uint32_t hi, uint32_t *dst, const char *dflt)
{
    uint32_t v;
    char msg[CMDLINE_WARNING_LEN];
    if (!parse_u32(val, &v) || v < lo || v > hi) {
        ksnprintf(msg, sizeof msg, "want a number from %u to %u; using %s", lo, hi, dflt);
        warn(cfg, word, msg);
        return false;
    }
    *dst = v;
    return true;
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

/* "BB:DD.F[/N]" -> bus, device (< 32), function (< 8), port N of a
 * multi-port card (< CMDLINE_PCI_PORTS, default 0); ends at ',' or NUL. */
static const char *parse_bdf(const char *s, struct boot_config *c)
{
    uint64_t bus, dev, fn;
    uint32_t port = 0;
    if (!(s = parse_hex(s, 2, ':', &bus)) || *s != ':' ||
        !(s = parse_hex(s + 1, 2, '.', &dev)) || *s != '.' || dev > 31 ||
        !(s[1] >= '0' && s[1] <= '7'))
        return NULL;
    fn = (uint64_t)(s[1] - '0');
    s += 2;
    if (*s == '/') {
        char digits[4] = { 0 };
        unsigned n = 0;
        for (s++; *s >= '0' && *s <= '9' && n < sizeof digits - 1; s++)
            digits[n++] = *s;
        if (!n || !parse_u32(digits, &port) || port >= CMDLINE_PCI_PORTS)
            return NULL;
    }
    c->console_pci_bus = (uint8_t)bus;
    c->console_pci_dev = (uint8_t)dev;
    c->console_pci_fn = (uint8_t)fn;
    c->console_pci_port = (uint8_t)port;
    return s;
}

/* The UART part of console=: sets kind and address, returns where an
 * optional ",baud" may follow, NULL when the value is not one we know. */
static const char *console_uart(struct boot_config *c, const char *val)
{
    uint64_t addr;
    if (!strcmp(val, "auto")) {
        c->console_kind = CONSOLE_AUTO;
        return val + 4;
    }
    if (!strncmp(val, "ttyS", 4) && val[4] >= '0' && val[4] <= '3') {
        c->console_kind = CONSOLE_TTYS;
        c->console_port = (unsigned)(val[4] - '0');
        return val + 5;
    }
    if (!strncmp(val, "pci", 3) && (!val[3] || val[3] == ',' || val[3] == ':')) {
        c->console_kind = CONSOLE_PCI;
        c->console_pci_any = val[3] != ':';
        return val[3] == ':' ? parse_bdf(val + 4, c) : val + 3;
    }
    if (!strncmp(val, "mmio,0x", 7) && (val = parse_hex(val + 7, 12, ',', &addr))) {
        c->console_kind = CONSOLE_MMIO;
        c->console_mmio = addr;
        return val;
    }
    return NULL;
}

static void opt_console(struct boot_config *cfg, const char *word, const char *val)
{
    struct boot_config c = *cfg;
    uint32_t baud = 115200;
    const char *rest = console_uart(&c, val);
    if (!rest || (*rest && *rest != ',')) {
        warn(cfg, word, "want auto, ttyS<0-3>, pci[:BB:DD.F[/N]] or mmio,0xADDR, then "
                        "[,baud]; using auto");
        cfg->console_kind = CONSOLE_AUTO;
        return;
    }
    if (c.console_kind == CONSOLE_MMIO && !c.console_mmio) {
        warn(cfg, word, "address 0 is refused (no UART sits at physical address 0); "
                        "using auto");
        cfg->console_kind = CONSOLE_AUTO;
        return;
    }
    if (*rest == ',' && c.console_kind != CONSOLE_AUTO && parse_u32(rest + 1, &baud) &&
        baud && baud < CMDLINE_MIN_BAUD) {
        char msg[CMDLINE_WARNING_LEN];
        ksnprintf(msg, sizeof msg, "baud %u is below the lowest rate, %u (16-bit "
                                   "divisor); using auto",
                  baud, CMDLINE_MIN_BAUD);
        warn(cfg, word, msg);
        cfg->console_kind = CONSOLE_AUTO;
        return;
    }
    if (*rest == ',' && (c.console_kind == CONSOLE_AUTO || !parse_u32(rest + 1, &baud) ||
                         baud == 0 || baud > 115200 || 115200 % baud)) {
        warn(cfg, word, "baud must divide 115200; using auto");
        cfg->console_kind = CONSOLE_AUTO;
        return;
    }
    c.console_baud = baud;
    *cfg = c;
}

static void opt_trace_events(struct boot_config *cfg, const char *word, const char *val)
{
    uint32_t v;
    if (!parse_range(cfg, word, val, MIN_TRACE_EVENTS, MAX_TRACE_EVENTS, &v, "4096"))
        return;
    if (v & (v - 1)) {
        warn(cfg, word, "not a power of two; using 4096");
        return;
    }
    cfg->trace_events = v;
}

/* trace.memory=<n>[K|M|G]: bytes in binary units (64M = 64 MiB). */
static void opt_trace_memory(struct boot_config *cfg, const char *word, const char *val)
{
    char digits[24];
    size_t n = strlen(val);
    uint64_t unit = 1;
    char last = n ? val[n - 1] : '\0';
    if (last == 'K' || last == 'k')
        unit = 1ull << 10;
    else if (last == 'M' || last == 'm')
        unit = 1ull << 20;
    else if (last == 'G' || last == 'g')
        unit = 1ull << 30;
    n -= unit != 1;
    uint32_t v;
    bool ok = n > 0 && n < sizeof digits;
    if (ok) {
        memcpy(digits, val, n);
        digits[n] = '\0';
        ok = parse_u32(digits, &v);
    }
    uint64_t bytes = ok ? (uint64_t)v * unit : 0;
    if (!ok || bytes < MIN_TRACE_MEMORY || bytes > MAX_TRACE_MEMORY) {
        warn(cfg, word, "want a size like 64M or 1G, 64K to 1024G; using trace.events");
        return;
    }
    cfg->trace_memory = bytes;
}

/* One usb.skip= item, `n` bytes at p: a kind or pci:BB:DD.F. */
static bool usb_skip_item(struct boot_config *c, const char *p, size_t n)
{
    /* clang-format off */
    static const struct { const char *name; unsigned bit; } kinds[] = {
        { "uhci", CMDLINE_USB_UHCI }, { "ohci", CMDLINE_USB_OHCI },
        { "ehci", CMDLINE_USB_EHCI }, { "xhci", CMDLINE_USB_XHCI },
    };
    /* clang-format on */
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (n == 4 && !strncmp(p, kinds[i].name, 4)) {
            c->usb_skip_kinds |= kinds[i].bit;
            return true;
        }
    char item[16];
    struct boot_config b = *c;
    if (n < 5 || n >= sizeof item || strncmp(p, "pci:", 4) || c->usb_skip_count == CMDLINE_USB_SKIP_MAX)
        return false;
    memcpy(item, p + 4, n - 4);
    item[n - 4] = 0;
    const char *end = parse_bdf(item, &b);
    if (!end || *end || b.console_pci_port)
        return false;
    c->usb_skip[c->usb_skip_count].bus = b.console_pci_bus;
    c->usb_skip[c->usb_skip_count].dev = b.console_pci_dev;
    c->usb_skip[c->usb_skip_count++].fn = b.console_pci_fn;
    return true;
}

static void opt_usb_skip(struct boot_config *cfg, const char *word, const char *val)
{
    struct boot_config c = *cfg;
    for (const char *p = val; *p;) {
        size_t n = 0;
        while (p[n] && p[n] != ',')
            n++;
        if (!usb_skip_item(&c, p, n) || (p[n] == ',' && !p[n + 1])) {
            warn(cfg, word, "want pci:BB:DD.F or uhci, ohci, ehci, xhci (at most 8 "
                            "functions), comma separated; ignored");
            return;
        }
        p += n + (p[n] == ',');
    }
    if (*val)
        *cfg = c;
    else
        warn(cfg, word, "empty; ignored");
}

static void opt_keyboard(struct boot_config *cfg, const char *word, const char *val)
{
    if (!strcmp(val, "both"))
        cfg->keyboard = CMDLINE_KEYBOARD_BOTH;
    else if (!strcmp(val, "legacy"))
        cfg->keyboard = CMDLINE_KEYBOARD_LEGACY;
    else if (!strcmp(val, "usb"))
        cfg->keyboard = CMDLINE_KEYBOARD_USB;
    else
        warn(cfg, word, "want legacy, usb or both; using both");
}

/* screen.mode=WxH: the mode grub.cfg asks GRUB for (the kernel only
 * checks what it was given). */
static void opt_screen_mode(struct boot_config *cfg, const char *word, const char *val)
{
    char w[8];
    uint32_t width, height;
    size_t n = 0;
    while (val[n] && val[n] != 'x')
        n++;
    bool ok = n > 0 && n < sizeof w && val[n] == 'x';
    if (ok) {
        memcpy(w, val, n);
        w[n] = '\0';
        ok = parse_u32(w, &width) && parse_u32(val + n + 1, &height) &&
             width >= CMDLINE_SCREEN_MIN && width <= CMDLINE_SCREEN_MAX &&
             height >= CMDLINE_SCREEN_MIN && height <= CMDLINE_SCREEN_MAX;
    }
    if (!ok) {
        warn(cfg, word, "want WIDTHxHEIGHT in pixels, e.g. 1280x720 (320..16384); ignored");
        return;
    }
    cfg->screen_w = width;
    cfg->screen_h = height;
}

static void opt_dump_to(struct boot_config *cfg, const char *word, const char *val)
{
    unsigned to = 0;
    for (const char *p = val; *p;) {
        size_t n = 0;
        while (p[n] && p[n] != ',') n++;
        if (n == 6 && !strncmp(p, "serial", 6))
            to |= DUMP_TO_SERIAL;
        else if (n == 5 && !strncmp(p, "stick", 5))
            to |= DUMP_TO_STICK;
        else if (n == 3 && !strncmp(p, "net", 3))
            to |= DUMP_TO_NET;
        else
            break;
        p += n + (p[n] == ',');
        if (!*p) {
            cfg->dump_to = to;
            return;
        }
    }
    warn(cfg, word, "want serial, stick, net or a list of them; ignored");
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

static void opt_net_to(struct boot_config *cfg, const char *word, const char *val)
{
    size_t n = 0;
    while (val[n] && val[n] != ':') n++;
    uint32_t ip, port = 0;
    if (!parse_ipv4(val, n, &ip) || !ip ||
        (val[n] && (!parse_u32(val + n + 1, &port) || port < 1 || port > 65535))) {
        warn(cfg, word, "want A.B.C.D or A.B.C.D:PORT; using 255.255.255.255:6666");
        return;
    }
    cfg->net_to_ip = ip;
    cfg->net_to_port = (uint16_t)port;
}

static void opt_net_ip(struct boot_config *cfg, const char *word, const char *val)
{
    size_t n = 0;
    while (val[n] && val[n] != '/') n++;
    uint32_t ip, prefix = 24;
    if (!parse_ipv4(val, n, &ip) || !ip || ip == 0xFFFFFFFFu ||
        (val[n] && (!parse_u32(val + n + 1, &prefix) || prefix < 1 || prefix > 30))) {
        warn(cfg, word, "want A.B.C.D or A.B.C.D/PREFIX (1..30); using DHCP");
        return;
    }
    cfg->net_ip = ip;
    cfg->net_mask = 0xFFFFFFFFu << (32 - prefix);
}

static void opt_on_fault(struct boot_config *cfg, const char *word, const char *val)
{
    static const char *const names[] = { "dump", "freeze", "off" };
    for (uint8_t i = 0; i < 3; i++)
        if (!strcmp(val, names[i])) {
            cfg->on_fault = i;
            return;
        }
    warn(cfg, word, "want dump, freeze or off; using dump");
}

static void copy_value(struct boot_config *cfg, const char *word, const char *val,
                       char *dst, size_t cap)
{
    if (strlen(val) >= cap || !*val) {
        warn(cfg, word, "empty or too long; ignored");
        return;
    }
    memcpy(dst, val, strlen(val) + 1);
}

static void apply(struct boot_config *cfg, const char *word)
{
    const char *eq = word;
    while (*eq && *eq != '=') eq++;
    size_t klen = (size_t)(eq - word);
    const char *val = *eq ? eq + 1 : NULL;
#define KEY(k) (klen == sizeof(k) - 1 && !strncmp(word, k, klen))
    if (KEY("nosmp") && !val)
        cfg->nosmp = true;
    else if (KEY("trace.off") && !val)
        cfg->trace_off = true;
    else if (!val)
        warn(cfg, word, "unknown option; ignored");
    else if (KEY("console"))
        opt_console(cfg, word, val);
    else if (KEY("maxcpus"))
        parse_range(cfg, word, val, 1, 4096, &cfg->maxcpus, "all CPUs");
    else if (KEY("timer_hz"))
        parse_range(cfg, word, val, 1, 10000, &cfg->timer_hz, "100");
    else if (KEY("trace.events"))
        opt_trace_events(cfg, word, val);
    else if (KEY("trace.memory"))
        opt_trace_memory(cfg, word, val);
    else if (KEY("trace.mask"))
        copy_value(cfg, word, val, cfg->trace_mask, sizeof cfg->trace_mask);
    else if (KEY("trace.dump_to"))
        opt_dump_to(cfg, word, val);
    else if (KEY("debug.fault"))
        parse_range(cfg, word, val, 0, 4095, (uint32_t *)&cfg->fault_cpu, "no fault");
    else if (KEY("debug.hang"))
        parse_range(cfg, word, val, 1, 4095, (uint32_t *)&cfg->hang_cpu, "no hang");
    else if (KEY("trace.on_fault"))
        opt_on_fault(cfg, word, val);
    else if (KEY("trace.dump_after"))
        parse_range(cfg, word, val, 1, MAX_DUMP_AFTER_S, &cfg->dump_after_s, "no dump");
    else if (KEY("usb") && val && !strcmp(val, "off"))
        cfg->usb_off = true;
    else if (KEY("usb"))
        warn(cfg, word, "want usb=off; ignored");
    else if (KEY("usb.skip") && val)
        opt_usb_skip(cfg, word, val);
    else if (KEY("usb.setup_ms"))
        parse_range(cfg, word, val, 1, CMDLINE_USB_SETUP_MAX, &cfg->usb_setup_ms, "10000");
    else if (KEY("keyboard") && val)
        opt_keyboard(cfg, word, val);
    else if (KEY("screen") && val && !strcmp(val, "off"))
        cfg->screen_off = true;
    else if (KEY("screen"))
        warn(cfg, word, "want screen=off; ignored");
    else if (KEY("screen.mode") && val)
        opt_screen_mode(cfg, word, val);
    else if (KEY("net") && !strcmp(val, "off"))
        cfg->net_off = true;
    else if (KEY("net"))
        warn(cfg, word, "want net=off; ignored");
    else if (KEY("net.keys") && !strcmp(val, "off"))
        cfg->net_keys_off = true;
    else if (KEY("net.keys"))
        warn(cfg, word, "want net.keys=off; ignored");
    else if (KEY("net.to"))
        opt_net_to(cfg, word, val);
    else if (KEY("net.ip"))
        opt_net_ip(cfg, word, val);
    else if (KEY("workload"))
        copy_value(cfg, word, val, cfg->workload, sizeof cfg->workload);
    else
        warn(cfg, word, "unknown option; ignored");
#undef KEY
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
