/* abi.c — the library's struct layouts and constants, for its callers (abi.h). */
#include "decoder/abi.h"
#include "decoder/csvout.h"
#include "decoder/ctfout.h"
#include "decoder/decode.h"
#include "decoder/jsonout.h"
#include "decoder/kmerge.h"
#include "decoder/pairs.h"
#include "decoder/perfettoout.h"
#include "decoder/stats.h"
#include "decoder/textout.h"
#include "recorder/pairing.h"
#include "trace/event.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define F(s, f)  { #f, offsetof(struct s, f), sizeof(((struct s *)0)->f) }
#define S(s)     { #s, sizeof(struct s), COUNT(s##_fields), s##_fields }

/* clang-format off */
static const struct bt_abi_field trace_event_fields[] = {
    F(trace_event, tsc), F(trace_event, seq), F(trace_event, type), F(trace_event, cpu),
    F(trace_event, flags), F(trace_event, a0), F(trace_event, a1),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_run_fields[] = {
    F(bt_run, line), F(bt_run, cpu), F(bt_run, start), F(bt_run, gap_over),
    F(bt_run, gap_excl), F(bt_run, status), F(bt_run, first),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_csv_type_fields[] = {
    F(bt_csv_type, name), F(bt_csv_type, label), F(bt_csv_type, nfields),
    F(bt_csv_type, arg), F(bt_csv_type, phase), F(bt_csv_type, sgn),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_phase_fields[] = {
    F(bt_phase, value), F(bt_phase, name),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_csv_fields[] = {
    F(bt_csv, types), F(bt_csv, type_index), F(bt_csv, phases), F(bt_csv, nphases),
    F(bt_csv, t0), F(bt_csv, hz), F(bt_csv, row_max),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_marker_fields[] = {
    F(bt_marker, cpu), F(bt_marker, seq), F(bt_marker, before), F(bt_marker, after),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_text_fields[] = {
    F(bt_text, table), F(bt_text, markers), F(bt_text, nmarkers), F(bt_text, int_w),
    F(bt_text, cpu_w), F(bt_text, row_max),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_ctf_seg_fields[] = {
    F(bt_ctf_seg, ev), F(bt_ctf_seg, cut_at), F(bt_ctf_seg, cut_n), F(bt_ctf_seg, n),
    F(bt_ctf_seg, ncuts), F(bt_ctf_seg, lead), F(bt_ctf_seg, tail), F(bt_ctf_seg, cpu),
    F(bt_ctf_seg, at), F(bt_ctf_seg, cut),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_ctf_stream_fields[] = {
    F(bt_ctf_stream, header), F(bt_ctf_stream, discarded), F(bt_ctf_stream, packets),
    F(bt_ctf_stream, shared),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_scan_fields[] = {
    F(bt_scan, min_tsc), F(bt_scan, max_tsc), F(bt_scan, events), F(bt_scan, sorted),
    F(bt_scan, consecutive), F(bt_scan, types),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_kmerge_src_fields[] = {
    F(bt_kmerge_src, ev), F(bt_kmerge_src, order), F(bt_kmerge_src, n), F(bt_kmerge_src, at),
    F(bt_kmerge_src, base), F(bt_kmerge_src, lo), F(bt_kmerge_src, hi), F(bt_kmerge_src, cpu),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_kmerge_head_fields[] = {
    F(bt_kmerge_head, tsc), F(bt_kmerge_head, key), F(bt_kmerge_head, src),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_kmerge_fields[] = {
    F(bt_kmerge, src), F(bt_kmerge, heap), F(bt_kmerge, nheap), F(bt_kmerge, starved),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_json_fmt_fields[] = {
    F(bt_json_fmt, head), F(bt_json_fmt, label), F(bt_json_fmt, nfields),
    F(bt_json_fmt, arg), F(bt_json_fmt, phase), F(bt_json_fmt, sgn),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_json_pair_fields[] = {
    F(bt_json_pair, begin), F(bt_json_pair, end), F(bt_json_pair, fmt),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_json_mark_fields[] = {
    F(bt_json_mark, at), F(bt_json_mark, text),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_json_fields[] = {
    F(bt_json, fmts), F(bt_json, type_index), F(bt_json, pairs), F(bt_json, npairs),
    F(bt_json, phases), F(bt_json, nphases), F(bt_json, t0), F(bt_json, hz),
    F(bt_json, timer), F(bt_json, row_max),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_json_cpu_fields[] = {
    F(bt_json_cpu, ev), F(bt_json_cpu, n), F(bt_json_cpu, role), F(bt_json_cpu, marks),
    F(bt_json_cpu, nmarks), F(bt_json_cpu, cpu), F(bt_json_cpu, at), F(bt_json_cpu, mark_at),
    F(bt_json_cpu, prev_tick), F(bt_json_cpu, have_tick),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_pf_fmt_fields[] = {
    F(bt_pf_fmt, head), F(bt_pf_fmt, nhead), F(bt_pf_fmt, nfields), F(bt_pf_fmt, label),
    F(bt_pf_fmt, arg), F(bt_pf_fmt, phase), F(bt_pf_fmt, sgn),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_pf_mark_fields[] = {
    F(bt_pf_mark, at), F(bt_pf_mark, data), F(bt_pf_mark, len),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_pf_flow_fields[] = {
    F(bt_pf_flow, at), F(bt_pf_flow, id), F(bt_pf_flow, terminating), F(bt_pf_flow, unused),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_pf_fields[] = {
    F(bt_pf, fmts), F(bt_pf, type_index), F(bt_pf, pairs), F(bt_pf, npairs), F(bt_pf, phases),
    F(bt_pf, nphases), F(bt_pf, t0), F(bt_pf, hz), F(bt_pf, timer), F(bt_pf, unused),
    F(bt_pf, unmatched_iid), F(bt_pf, bucket_ns), F(bt_pf, crossing_iid),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_pf_cpu_fields[] = {
    F(bt_pf_cpu, ev), F(bt_pf_cpu, n), F(bt_pf_cpu, partner), F(bt_pf_cpu, kind),
    F(bt_pf_cpu, marks), F(bt_pf_cpu, nmarks), F(bt_pf_cpu, flows), F(bt_pf_cpu, nflows),
    F(bt_pf_cpu, seq_id), F(bt_pf_cpu, rate_track), F(bt_pf_cpu, fill_track),
    F(bt_pf_cpu, base), F(bt_pf_cpu, cap), F(bt_pf_cpu, at), F(bt_pf_cpu, mark_at),
    F(bt_pf_cpu, flow_at), F(bt_pf_cpu, bucket), F(bt_pf_cpu, count), F(bt_pf_cpu, last_rate),
    F(bt_pf_cpu, last_fill), F(bt_pf_cpu, held), F(bt_pf_cpu, have_bucket),
    F(bt_pf_cpu, have_rate), F(bt_pf_cpu, have_fill), F(bt_pf_cpu, done),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field pairing_role_fields[] = {
    F(pairing_role, key), F(pairing_role, kind),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_stats_type_fields[] = {
    F(bt_stats_type, group), F(bt_stats_type, timer),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_stats_in_fields[] = {
    F(bt_stats_in, roles), F(bt_stats_in, nroles), F(bt_stats_in, types),
    F(bt_stats_in, ntypes), F(bt_stats_in, ngroups),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_dist_fields[] = {
    F(bt_dist, count), F(bt_dist, value), F(bt_dist, negative),
};
/* clang-format on */
/* clang-format off */
static const struct bt_abi_field bt_cpu_stats_fields[] = {
    F(bt_cpu_stats, max_tsc), F(bt_cpu_stats, first_tsc), F(bt_cpu_stats, last_tsc),
    F(bt_cpu_stats, period),
};
/* clang-format on */

/* clang-format off */
static const struct bt_abi_struct structs[] = {
    S(trace_event), S(bt_run), S(bt_csv_type), S(bt_phase), S(bt_csv), S(bt_marker),
    S(bt_text), S(bt_ctf_seg), S(bt_ctf_stream), S(bt_scan), S(bt_kmerge_src),
    S(bt_kmerge_head), S(bt_kmerge),
    S(bt_json_fmt), S(bt_json_pair), S(bt_json_mark), S(bt_json), S(bt_json_cpu),
    S(bt_pf_fmt), S(bt_pf_mark), S(bt_pf_flow), S(bt_pf), S(bt_pf_cpu),
    S(pairing_role), S(bt_stats_type), S(bt_stats_in), S(bt_dist), S(bt_cpu_stats),
};
/* clang-format on */

#define C(name)  { #name, (int64_t)(name) }
/* clang-format off */
static const struct bt_abi_const constants[] = {
    C(BT_DAMAGED), C(BT_PUNT), C(BT_LINE_MAX_CHARS), C(BT_CPU_LIMIT),
    C(BT_CSV_FIELDS), C(BT_CSV_ARGS_MAX), C(BT_CTF_EVENT_SIZE), C(BT_JSON_FIELDS),
    C(BT_PAIR_MAX_EVENTS), C(BT_STATS_TYPES), C(BT_STATS_NO_GROUP), C(BT_DIST_VALUES),
    C(PAIRING_DEPTH), C(TRACE_KIND_INSTANT), C(TRACE_KIND_BEGIN), C(TRACE_KIND_END),
    C(BT_PF_FIELDS), C(BT_PF_ROW_MAX),
};
/* clang-format on */

const struct bt_abi_struct *bt_abi_structs(size_t *n)
{
    *n = COUNT(structs);
    return structs;
}

const struct bt_abi_const *bt_abi_constants(size_t *n)
{
    *n = COUNT(constants);
    return constants;
}
