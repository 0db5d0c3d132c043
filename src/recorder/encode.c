/* encode.c — the dump encoder. The format is specified in
 * docs/dump-format.md; the constants below are its names for things.
 *
 * Two kinds of line, each protected by its own CRC-32:
 *   text lines   "%X <line> key=value ... *CCCCCCCC" (CRC of the text
 *                before " *", 8 upper-case hex digits);
 *   event lines  "%E" + base64(payload + crc32(payload) as 4 bytes LE).
 * Every CRC after DUMP BEGIN's starts from the dump's seed, the CRC of its
 * 12-byte id (nonce, dump number; little-endian): crc32(seed, data) is the
 * CRC of id + data, so a line only checks out inside its own dump.
 * Every event line restarts the predictors, so it decodes on its own. */
#include "recorder/encode.h"
#include "lib/crc32.h"
#include "lib/format.h"
#include "recorder/dumpid.h"
#include "recorder/predict.h"
#include "recorder/schema.h"
#include "trace/trace.h"

#define TAG_META      "%M"
#define TAG_CATEGORY  "%K"
#define TAG_PHASE     "%P"
#define TAG_TYPE      "%T"
#define TAG_CPU       "%C"
#define TAG_WORKLOAD  "%W"
#define TAG_IDENTITY  "%I"
#define TAG_EVENTS    "%E"
#define CRC_SUFFIX    10          /* " *" + 8 hex digits */
#define LINE_BYTES    (DUMP_LINE_MAX + 1)   /* a line and its "\n" at most */
#define CPU_RESERVE   (2 * LINE_BYTES)      /* a %C line and a continuation */

/* Event line: payload + CRC <= EV_LINE_BYTES, whose base64 (198 chars)
 * plus the tag is DUMP_LINE_MAX. */
#define EV_LINE_BYTES ((DUMP_LINE_MAX - 2) / 4 * 3 + 1)
#define EV_CRC_BYTES  4
_Static_assert(EV_LINE_BYTES == 148, "event line payload budget");
_Static_assert((EV_LINE_BYTES * 4 + 2) / 3 + 2 <= DUMP_LINE_MAX,
               "event lines fit DUMP_LINE_MAX");

struct enc {
    const struct dump_sink *sink;
    uint32_t seed;               /* CRC start of every line: 0 for DUMP BEGIN */
    uint32_t line_no;            /* of the line being built */
    uint64_t events;             /* in the lines sent, and in the one being built */
    uint64_t bytes;              /* in the lines sent */
    uint64_t room;               /* bytes the lines may take, 0: no bound */
    struct dump_progress done;   /* what the sink has been told */
    char text[DUMP_LINE_MAX + 2];
    unsigned len;
    char tag[3];
    char sticky[64];         /* fields repeated on continuation lines */
    unsigned sticky_len;
    uint8_t bin[EV_LINE_BYTES];
    unsigned bin_len;
    struct pred pred;
};

/* ---- small formatting helpers ------------------------------------------- */

static unsigned str_len(const char *s)
{
    unsigned n = 0;
    while (s[n])
        n++;
    return n;
}

static char clean_key(char c)
{
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    return ok ? c : '_';
}

/* Values: printable, no spaces (except desc, which may hold spaces). */
static char clean_val(char c, bool spaces)
{
    if (c == ' ' && spaces)
        return c;
    return c > ' ' && c <= '~' ? c : '_';
}

static void emit(struct enc *e, const char *s, unsigned n)
{
    e->sink->write(e->sink->ctx, s, n);
    e->bytes += n;
    e->line_no++;
    e->done.lines = e->line_no;
    e->done.events_sent = e->events;   /* a line is sent before the next one's first event */
    if (e->sink->progress)
        e->sink->progress(&e->done);
}

/* ---- text lines ------------------------------------------------------------ */

static void put_chars(struct enc *e, const char *s, unsigned n)
{
    for (unsigned i = 0; i < n && e->len + CRC_SUFFIX < DUMP_LINE_MAX; i++)
        e->text[e->len++] = s[i];
}

/* Starts "%X <line>" (or a bare word such as "DUMP BEGIN" when tag is
 * NULL and word given). */
static void tl_begin(struct enc *e, const char *tag, const char *word)
{
    e->len = 0;
    e->sticky_len = 0;
    e->tag[0] = 0;
    if (tag) {
        e->tag[0] = tag[0];
        e->tag[1] = tag[1];
        e->tag[2] = 0;
        put_chars(e, tag, 2);
        char num[12];
        put_chars(e, num, (unsigned)ksnprintf(num, sizeof num, " %u", e->line_no));
    } else {
        put_chars(e, word, str_len(word));
    }
}

static void tl_end(struct enc *e)
{
    uint32_t crc = crc32_update(e->seed, e->text, e->len);
    e->text[e->len++] = ' ';
    e->text[e->len++] = '*';
    e->len += (unsigned)ksnprintf(e->text + e->len, 10, "%08X\n", crc);
    emit(e, e->text, e->len);
}

/* Everything after the line number so far is repeated on continuation
 * lines (e.g. "cpu=3"), so each line stands on its own. */
static void tl_sticky(struct enc *e)
{
    unsigned start = 0;
    while (start < e->len && e->text[start] != ' ')
        start++;
    start++;
    while (start < e->len && e->text[start] != ' ')
        start++;
    e->sticky_len = 0;
    for (unsigned i = start; i < e->len && e->sticky_len < sizeof e->sticky; i++)
        e->sticky[e->sticky_len++] = e->text[i];
}

/* Ends the line and starts a continuation with the same tag and sticky
 * fields, when `need` more characters would not fit. */
static void tl_room(struct enc *e, unsigned need)
{
    if (!e->tag[0] || e->len + need + CRC_SUFFIX <= DUMP_LINE_MAX)
        return;
    char tag[3] = { e->tag[0], e->tag[1], 0 };
    char sticky[sizeof e->sticky];
    unsigned n = e->sticky_len;
    for (unsigned i = 0; i < n; i++)
        sticky[i] = e->sticky[i];
    tl_end(e);
    tl_begin(e, tag, NULL);
    put_chars(e, sticky, n);
    for (unsigned i = 0; i < n; i++)
        e->sticky[i] = sticky[i];
    e->sticky_len = n;
}

/* " key=value"; with `spaces` the value may hold spaces and is cut to
 * fit (use it for the last field of a line only). */
static void tl_put(struct enc *e, const char *key, const char *val, bool spaces)
{
    unsigned kl = str_len(key), vl = str_len(val);
    tl_room(e, 2 + kl + vl);
    put_chars(e, " ", 1);
    for (unsigned i = 0; i < kl && e->len + CRC_SUFFIX < DUMP_LINE_MAX; i++)
        e->text[e->len++] = clean_key(key[i]);
    put_chars(e, "=", 1);
    for (unsigned i = 0; i < vl && e->len + CRC_SUFFIX < DUMP_LINE_MAX; i++)
        e->text[e->len++] = clean_val(val[i], spaces);
}

/* " key=" and v in decimal, or as 16 upper-case hex digits. */
static void tl_put_num(struct enc *e, const char *key, uint64_t v, bool hex)
{
    char num[21];
    ksnprintf(num, sizeof num, hex ? "%016lX" : "%lu", (unsigned long)v);
    tl_put(e, key, num, false);
}

static void tl_put_u64(struct enc *e, const char *key, uint64_t v)
{
    tl_put_num(e, key, v, false);
}

/* ---- base64 (RFC 4648 alphabet, no padding) --------------------------- */

static unsigned base64(char *out, const uint8_t *in, unsigned n)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned o = 0;
    for (unsigned i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = abc[v >> 18];
        out[o++] = abc[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = abc[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = abc[v & 63];
    }
    return o;
}

/* ---- event lines -------------------------------------------------------- */

/* Line header: line, cpu, first seq, the seqs skipped just before it
 * (overwritten, excluded), first tsc; all varints. */
static void ev_line_start(struct enc *e, unsigned cpu, uint64_t seq,
                          const struct ring_snap *s, uint64_t tsc)
{
    unsigned n = 0;
    n += varint_put(e->bin + n, e->line_no);
    n += varint_put(e->bin + n, cpu);
    n += varint_put(e->bin + n, seq);
    n += varint_put(e->bin + n, s->gap_overwritten);
    n += varint_put(e->bin + n, s->gap_excluded);
    n += varint_put(e->bin + n, tsc);
    e->bin_len = n;
    pred_reset(&e->pred, tsc);
}

static void ev_line_end(struct enc *e)
{
    uint32_t crc = crc32_update(e->seed, e->bin, e->bin_len);
    for (int i = 0; i < EV_CRC_BYTES; i++)
        e->bin[e->bin_len++] = (uint8_t)(crc >> (8 * i));
    e->text[0] = TAG_EVENTS[0];
    e->text[1] = TAG_EVENTS[1];
    e->len = 2 + base64(e->text + 2, e->bin, e->bin_len);
    e->text[e->len++] = '\n';
    emit(e, e->text, e->len);
    e->bin_len = 0;
}

/* Appends ev to the open line if it fits; false if a new line is needed. */
static bool ev_append(struct enc *e, const struct trace_event *ev)
{
    uint8_t tmp[EV_MAX_BYTES];
    unsigned n = pred_encode(&e->pred, ev, tmp);
    if (e->bin_len + n + EV_CRC_BYTES > EV_LINE_BYTES)
        return false;
    for (unsigned i = 0; i < n; i++)
        e->bin[e->bin_len++] = tmp[i];
    pred_update(&e->pred, ev);
    return true;
}

/* ---- dump sections ---------------------------------------------------- */

/* A stream's part without tables (docs/streaming.md, Tables only in part 0). */
static bool short_part(const struct dump_meta *m) { return m->stream && !m->tables; }

static void put_begin(struct enc *e, const struct dump_meta *m,
                      struct ring *const rings[], unsigned ncpus)
{
    uint64_t held = 0;
    for (unsigned i = 0; i < ncpus; i++)
        if (rings[i])
            held += ring_held_from(rings[i], m->from ? m->from[i].seq : 0);
    e->done = (struct dump_progress){ m->dump_no, 0, 0, held, false };
    tl_begin(e, NULL, "DUMP BEGIN");
    tl_put_u64(e, "v", DUMP_FORMAT_VERSION);
    tl_put_u64(e, "dump", m->dump_no);
    tl_put_num(e, "nonce", m->nonce, true);
    tl_put_u64(e, "cpus", ncpus);
    tl_put_u64(e, "events", held);
    if (m->stream) {
        tl_put_u64(e, "stream", m->stream);
        tl_put_u64(e, "part", m->part);
        if (m->final)
            tl_put_u64(e, "final", 1);
    }
    if (m->previous_boot)
        tl_put(e, "boot", "previous", false);
    e->seed = 0;                  /* the one line checkable without the id */
    tl_end(e);
    e->seed = dump_id_seed(m->nonce, m->dump_no);
}

static void put_header(struct enc *e, const struct dump_meta *m,
                       struct ring *const rings[], unsigned ncpus)
{
    put_begin(e, m, rings, ncpus);
    tl_begin(e, TAG_META, NULL);
    tl_put_u64(e, "tsc_hz", m->tsc_hz);
    if (m->stream) {
        tl_put_u64(e, "stream", m->stream);
        tl_put_u64(e, "part", m->part);
    }
    if (!short_part(m)) {
        tl_put_u64(e, "pinned_slots", RING_PINNED_SLOTS);
        tl_put_u64(e, "result_slots", RING_RESULT_SLOTS);
    }
    for (unsigned i = 0; i < m->nextras && m->extras; i++) {
        const struct dump_extra *x = &m->extras[i];
        if (!x->key)
            continue;
        if (x->str)
            tl_put(e, x->key, x->str, false);
        else
            tl_put_u64(e, x->key, x->num);
    }
    tl_end(e);
}

static void put_names(struct enc *e, const char *tag,
                      const char *(*name)(unsigned), unsigned limit)
{
    tl_begin(e, tag, NULL);
    for (unsigned i = 0; i < limit; i++) {
        const char *n = name(i);
        if (!n)
            continue;
        char key[12];
        ksnprintf(key, sizeof key, "%u", i);
        tl_put(e, key, n, false);
    }
    tl_end(e);
}

static void put_types(struct enc *e)
{
    static const char *const signed_names[4] = { "-", "a0", "a1", "a0,a1" };
    unsigned count;
    const struct trace_event_info *t = trace_event_table(&count);
    for (unsigned i = 0; i < count; i++, t++) {
        tl_begin(e, TAG_TYPE, NULL);
        tl_put_u64(e, "id", t->id);
        tl_sticky(e);
        /* first after id, so it is always on the line holding the name */
        if (t->signed_args)
            tl_put(e, "signed", signed_names[t->signed_args & 3], false);
        tl_put(e, "name", t->name, false);
        tl_put(e, "cat", trace_category_name(t->category), false);
        tl_put(e, "kind", trace_kind_name(t->kind), false);
        if (trace_pair_of(t->id))
            tl_put_u64(e, "pair", trace_pair_of(t->id));
        if (trace_flow_of(t->id))
            tl_put_u64(e, "flow", trace_flow_of(t->id));
        tl_put_u64(e, "pin", t->retention == TRACE_RET_PINNED);
        if (t->retention == TRACE_RET_RESULT)
            tl_put_u64(e, "result", 1);
        tl_put(e, "a0", t->arg0[0] ? t->arg0 : "-", false);
        tl_put(e, "a1", t->arg1[0] ? t->arg1 : "-", false);
        tl_put(e, "desc", t->desc, true);
        tl_end(e);
    }
}

/* One %I line per identity item: key=NAME desc=VALUE (the value may hold
 * spaces, so it rides in desc, the one field that may; decoders before
 * %I skip the tag). A number is written in decimal. */
static void put_identity(struct enc *e, const struct dump_meta *m)
{
    for (unsigned i = 0; i < m->nidentity && m->identity; i++) {
        const struct dump_extra *x = &m->identity[i];
        if (!x->key)
            continue;
        char num[21];
        if (!x->str)
            ksnprintf(num, sizeof num, "%lu", (unsigned long)x->num);
        tl_begin(e, TAG_IDENTITY, NULL);
        tl_put(e, "key", x->key, false);
        tl_sticky(e);                   /* a value too long moves whole to a line of its own */
        tl_put(e, "desc", x->str ? x->str : num, true);
        tl_end(e);
    }
}

/* One %W line per workloads.def entry. */
static void put_workloads(struct enc *e)
{
    const struct workload_decl *w = workload_decl;
    for (unsigned i = 0; i < WORKLOAD_COUNT; i++, w++) {
        char key[2] = { w->key, 0 };
        tl_begin(e, TAG_WORKLOAD, NULL);
        tl_put_u64(e, "id", w->id);
        tl_sticky(e);
        tl_put(e, "name", w->name, false);
        tl_put(e, "key", key, false);
        tl_put(e, "results", w->results[0] ? w->results : "-", false);
        tl_put(e, "desc", w->desc, true);
        tl_end(e);
    }
}

static void put_cpu_summary(struct enc *e, unsigned cpu, const uint32_t *apic,
                            const struct ring *r, const struct ring_snap *s)
{
    tl_begin(e, TAG_CPU, NULL);
    tl_put_u64(e, "cpu", cpu);
    tl_sticky(e);
    if (apic)
        tl_put_u64(e, "apic", *apic);
    tl_put_u64(e, "cap", r ? r->capacity : 0);
    tl_put_u64(e, "base", s->base);
    tl_put_u64(e, "head", s->head);
    tl_put_u64(e, "recorded", s->head - s->base);
    tl_put_u64(e, "overwritten", s->overwritten);
    tl_put_u64(e, "excluded", s->excluded);
    tl_put_u64(e, "refused", s->refused);
    tl_put_u64(e, "sent", s->sent);
    if (s->sent) {
        tl_put_u64(e, "first", s->first);
        tl_put_u64(e, "last", s->last);
    }
    tl_put_u64(e, "pinned", s->pinned);
    tl_put_u64(e, "results", s->results);
    tl_end(e);
}

/* The bytes of event lines the CPU about to be written may take: an
 * equal share, among the `left` CPUs still to come (itself included), of
 * what room leaves after their %C lines and DUMP END. */
static uint64_t cpu_budget(const struct enc *e, unsigned left)
{
    if (!e->room)
        return UINT64_MAX;
    uint64_t fixed = (uint64_t)left * CPU_RESERVE + LINE_BYTES;
    return e->bytes + fixed >= e->room ? 0 : (e->room - e->bytes - fixed) / left;
}

/* A CPU's events, in lines; the snapshot stops early (ring_snap_cut)
 * when the next line would pass budget. */
static void put_events(struct enc *e, unsigned cpu, struct ring_snap *s, uint64_t budget)
{
    struct trace_event ev;
    uint64_t seq, start = e->bytes;
    bool open = false;
    while (ring_snap_next(s, &ev, &seq)) {
        /* A new line at every gap in seq, so each line covers one
         * contiguous run and says what the gap before it was. */
        bool gap = s->gap_overwritten || s->gap_excluded;
        if (open && !gap && ev_append(e, &ev)) {
            e->events++;
            continue;
        }
        if (open)
            ev_line_end(e);
        open = false;
        if (e->bytes - start + LINE_BYTES > budget) {
            ring_snap_cut(s, seq);      /* out of room: the next part starts here */
            break;
        }
        ev_line_start(e, cpu, seq, s, ev.tsc);
        ev_append(e, &ev);      /* always fits an empty line */
        open = true;
        e->events++;
    }
    if (open)
        ev_line_end(e);
}

static void put_cpu(struct enc *e, const struct dump_meta *m, unsigned index, unsigned ncpus,
                    struct ring *r)
{
    struct ring_snap s = { 0 };
    unsigned cpu = r ? r->cpu : index;
    if (r) {
        if (m->stream || m->from)
            ring_snap_begin_from(&s, r, m->from ? &m->from[index] : NULL);
        else
            ring_snap_begin(&s, r);
        put_events(e, cpu, &s, cpu_budget(e, ncpus - index));
        if (m->to)
            ring_snap_mark(&s, &m->to[index]);
    }
    put_cpu_summary(e, cpu, m->apic_ids ? &m->apic_ids[index] : NULL, r, &s);
}

uint64_t dump_encode(const struct dump_sink *sink, const struct dump_meta *meta,
                     struct ring *const rings[], unsigned ncpus)
{
    struct enc e;
    e.sink = sink;
    e.seed = 0;
    e.line_no = 0;
    e.events = 0;
    e.bytes = 0;
    e.room = meta->room;
    e.bin_len = 0;

    put_header(&e, meta, rings, ncpus);
    if (!short_part(meta)) {
        put_identity(&e, meta);
        put_names(&e, TAG_CATEGORY, trace_category_name, 30);
        put_names(&e, TAG_PHASE, trace_phase_name, trace_phase_limit);
        put_types(&e);
        put_workloads(&e);
    }
    for (unsigned i = 0; i < ncpus; i++)
        put_cpu(&e, meta, i, ncpus, rings[i]);

    tl_begin(&e, NULL, "DUMP END");
    tl_put_u64(&e, "dump", meta->dump_no);
    tl_put_num(&e, "nonce", meta->nonce, true);
    tl_put_u64(&e, "events", e.events);
    tl_put_u64(&e, "lines", e.line_no + 1);
    e.done.done = true;
    tl_end(&e);
    return e.events;
}
