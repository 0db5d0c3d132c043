/* kassert.h — invariants checked while the kernel runs.
 *
 *     kassert(r->commit <= r->head);
 *
 * When the expression is false the CPU prints
 *     KASSERT cpu=N src/recorder/snapshot.c:88: r->commit <= r->head
 * on the console and then raises #UD (ud2), so it is parked exactly like
 * a CPU that faults (exception.h): an EXCEPTION event, the register
 * report, trace.on_fault (a dump by default), a dump it was writing
 * abandoned and its rings and console given back, the keys handed to
 * another CPU; the other CPUs keep running.
 *
 * For cold paths only (snapshots, clears, boot): never inside the trace
 * point (trace_emit_at, ring_write), whose cost must not change. */
#ifndef LIB_KASSERT_H
#define LIB_KASSERT_H
#include <stddef.h>
#include <stdint.h>

#define kassert(expr)                                \
    do {                                             \
        if (__builtin_expect(!(expr), 0))            \
            kassert_fail(__FILE__, __LINE__, #expr); \
    } while (0)

#define KASSERT_LINE_MAX 160

/* The kernel's prints the line and raises #UD (lib/kprintf.c); host
 * builds report it and abort (lib/kassert.c). */
__attribute__((noreturn, cold)) void kassert_fail(const char *file, unsigned line,
                                                  const char *expr);

/* The line kassert_fail prints (without the newline), into buf[cap]
 * (always terminated, cut short if it does not fit); returns its length
 * as ksnprintf does. Pure: host-tested. */
int kassert_format(char *buf, size_t cap, uint32_t cpu, const char *file, unsigned line,
                   const char *expr);

#endif
