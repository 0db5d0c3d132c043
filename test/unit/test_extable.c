/* test_extable.c — the exception fixup table and the *_safe MSR accesses
 * (arch/extable.h, arch/msr.h), run for real: on the host, RDMSR and
 * WRMSR in user mode raise #GP, which Linux delivers as SIGSEGV with the
 * faulting instruction in the saved RIP. The handler here does what the
 * kernel's #GP handler does (arch/idt.c): look the RIP up in this
 * binary's own table and resume at its fixup. So the inline assembly,
 * the table entries the assembler emits and the lookup are all the
 * kernel's; only the trap delivery is the host's. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include "arch/extable.h"
#include "arch/msr.h"
#include "check.h"

static int fixed;                       /* faults the handler resumed */

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)si;
    ucontext_t *uc = ctx;
    uint64_t to = extable_fixup((uint64_t)uc->uc_mcontext.gregs[REG_RIP]);
    if (!to) {                          /* a real crash: die of it */
        signal(sig, SIG_DFL);
        return;
    }
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)to;
    fixed++;
}

static void test_safe_accesses(void)
{
    uint64_t v = 0x1234;
    CHECK(!rdmsr_safe(0x8B, &v));       /* IA32_BIOS_SIGN_ID: #GP in ring 3 */
    CHECK_EQ(v, 0);                     /* a failed read gives 0, never garbage */
    CHECK_EQ(fixed, 1);
    CHECK(!wrmsr_safe(0x8B, 0));
    CHECK_EQ(fixed, 2);
    CHECK(!rdmsr_safe(0x34, &v));       /* another call site: its own entry */
    CHECK_EQ(fixed, 3);
    CHECK_EQ(extable_fixups_taken(), 3);
}

static void test_search(void)
{
    /* Entries are offsets from themselves: build two by hand. */
    static struct extable_entry t[2];
    uint64_t base = (uint64_t)(uintptr_t)t;
    t[0].insn = (int32_t)(0x100 - 0);            /* insn at base + 0x100 */
    t[0].fixup = (int32_t)(0x200 - 4);           /* fixup at base + 0x200 */
    t[1].insn = (int32_t)(-0x40 - 8);            /* before the table */
    t[1].fixup = (int32_t)(0x300 - 12);
    CHECK_EQ(extable_search(t, t + 2, base + 0x100), base + 0x200);
    CHECK_EQ(extable_search(t, t + 2, base - 0x40), base + 0x300);
    CHECK_EQ(extable_search(t, t + 2, base + 0x101), 0);   /* not an entry */
    CHECK_EQ(extable_search(t, t, base + 0x100), 0);       /* empty table */
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    test_search();
    test_safe_accesses();
    return check_summary("extable");
}
