/* format.h — printf-style formatting into a buffer (no I/O).
 *
 * Conversions: %d %i %u %x %X %o %c %s %p %%, length modifiers l, ll, z,
 * flags '-' and '0', a field width (number or *), and a precision for %s.
 * Output is always NUL terminated; the return value is the length the full
 * output would have had (like C's vsnprintf). */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H
#include <stdarg.h>
#include <stddef.h>

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append to buf (size bytes, `at` of them used) and return the new used
 * length: never past size - 1, so a loop of appends may not run past the
 * buffer however long its pieces are (what did not fit is cut off). */
size_t kappendf(char *buf, size_t size, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
