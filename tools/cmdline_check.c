/* cmdline_check.c — the kernel's own command-line parser on the host, so
 * scripts/netboot refuses a --cmdline the kernel would warn about before
 * a room of machines boots with it.
 *
 *   build/tools/cmdline_check "workload=tsc:dump=1 timer_hz=1000"
 *
 * Prints each warning the kernel would print at boot ("cmdline: ..."), one
 * a line, and exits 1 when there is one; 0 and nothing printed otherwise. */
#include <stdio.h>
#include "firmware/cmdline.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cmdline_check \"KERNEL OPTIONS\"\n");
        return 2;
    }
    static struct boot_config cfg;
    cmdline_defaults(&cfg);
    cmdline_parse(argv[1], &cfg);
    for (unsigned i = 0; i < cfg.warning_count; i++)
        printf("%s\n", cfg.warnings[i]);
    return cfg.warning_count ? 1 : 0;
}
