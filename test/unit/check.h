/* check.h — the host unit tests' tiny assertion kit.
 *
 * CHECK(cond) records a failure with file:line and carries on; each test
 * binary ends with check_summary(), which prints the closing line
 * "N passed, N failed" and returns the exit status. */
#ifndef TEST_UNIT_CHECK_H
#define TEST_UNIT_CHECK_H
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            check_passed++;                                                  \
        } else {                                                             \
            check_failed++;                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
        }                                                                    \
    } while (0)

#define CHECK_EQ(a, b)                                                           \
    do {                                                                         \
        unsigned long long check_a_ = (unsigned long long)(a);                   \
        unsigned long long check_b_ = (unsigned long long)(b);                   \
        if (check_a_ == check_b_) {                                              \
            check_passed++;                                                      \
        } else {                                                                 \
            check_failed++;                                                      \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%llu != %llu)\n", \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_);             \
        }                                                                        \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed ? 1 : 0;
}
#endif
