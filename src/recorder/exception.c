/* exception.c — report a CPU exception, dump or freeze the trace, park
 * the CPU; NMIs dump once (exception.h). */
#include "recorder/exception.h"
#include "arch/cpu.h"
#include "arch/percpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "recorder/dump.h"
#include "recorder/snapshot.h"
#include "recorder/stream.h"
#include "time/tsc.h"
#include "trace/trace.h"

#define DUMP_STACK_BYTES 16384
#define LINE_MAX_NMI     128                    /* the folded NMI's line */

/* clang-format off */
static const char *const names[32] = {
    "#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
    "#BR bound range", "#UD invalid opcode", "#NM device not available",
    "#DF double fault", "coprocessor overrun", "#TS invalid TSS",
    "#NP segment not present", "#SS stack fault", "#GP general protection",
    "#PF page fault", "reserved 15", "#MF x87 error", "#AC alignment check",
    "#MC machine check", "#XM SIMD error", "#VE virtualization", "#CP control protection",
    "reserved 22", "reserved 23", "reserved 24", "reserved 25", "reserved 26",
    "reserved 27", "#HV hypervisor injection", "#VC VMM communication",
    "#SX security", "reserved 31",
};
/* clang-format on */

static enum on_fault on_fault = ON_FAULT_DUMP;
static volatile uint8_t faulted[MAX_CPUS];
/* The dump runs on this stack, not on the faulting one (which may be the
 * broken thing) nor on a 4 KiB IST stack; only the CPU holding the reader
 * claim (snapshot.h) uses it. */
static uint8_t dump_stack[DUMP_STACK_BYTES] __attribute__((aligned(16)));
static struct dump_request request;
static volatile uint32_t nmi_busy;
static volatile uint64_t nmi_end_tsc;
static volatile uint32_t folded_said;
#define LINE_MAX_NMI 128          /* the burst window's one line is out */
static volatile uint64_t nmi_tsc[MAX_CPUS];   /* when each CPU last took an NMI */
static volatile uint32_t keys_cpu;             /* 0 until the boot CPU faults */

void exception_set_on_fault(enum on_fault action) { on_fault = action; }

uint32_t exception_keys_cpu(void) { return keys_cpu; }

/* The faulted CPU read the keys: hand them to the lowest CPU still running. */
static void hand_over_keys(uint32_t cpu)
{
    if (cpu != keys_cpu)
        return;
    for (uint32_t i = 0; i < MAX_CPUS; i++)
        if (cpus[i].online && !faulted[i]) {
            keys_cpu = i;
            kprintf("keys: CPU %u reads the keys from now on (workloads need CPU 0)\n", i);
            return;
        }
}

static void report(const struct int_frame *f, uint32_t cpu)
{
    console_lock();
    kprintf("\nEXCEPTION cpu=%u vector=%lu (%s) error=0x%lx\n", cpu, f->vector,
            names[f->vector & 31], f->error);
    kprintf("  rip=%016lx cs=%04lx rflags=%016lx rsp=%016lx ss=%04lx\n",
            f->rip, f->cs, f->rflags, f->rsp, f->ss);
    kprintf("  cr2=%016lx cr3=%016lx\n", read_cr2(), read_cr3());
    kprintf("  rax=%016lx rbx=%016lx rcx=%016lx rdx=%016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
    kprintf("  rsi=%016lx rdi=%016lx rbp=%016lx r8 =%016lx\n", f->rsi, f->rdi, f->rbp, f->r8);
    kprintf("  r9 =%016lx r10=%016lx r11=%016lx r12=%016lx\n", f->r9, f->r10, f->r11, f->r12);
    kprintf("  r13=%016lx r14=%016lx r15=%016lx\n", f->r13, f->r14, f->r15);
    console_unlock();
}

static void dump_body(void) { dump_run(&request); }

/* Call fn() with the stack pointer at the top of dump_stack. The System V
 * ABI keeps rbx across the call: it holds the old stack pointer. */
static void on_dump_stack(void (*fn)(void))
{
    void *top = dump_stack + sizeof dump_stack;
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "mov %0, %%rsp\n\t"
                     "call *%1\n\t"
                     "mov %%rbx, %%rsp"
                     : : "r"(top), "r"(fn)
                     : "rbx", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
                       "memory", "cc");
}

/* trace.on_fault for a fault (or NMI) taken by `cpu`. */
static void act(uint32_t cpu, uint64_t vector, const char *trigger, bool quiet)
{
    if (on_fault == ON_FAULT_OFF)
        return;
    if (on_fault == ON_FAULT_FREEZE) {
        snapshot_stop_tracing();
        kprintf("trace: recording stopped (trace.on_fault=freeze): d dumps the rings, "
                "t records again\n");
        return;
    }
    if (!snapshot_claim(SNAPSHOT_CLAIM_US))
        return;
    kprintf("trace: %s on CPU %u: dumping every ring (trace.on_fault=dump)\n", trigger, cpu);
    request = (struct dump_request){ trigger, (int32_t)cpu, vector, quiet };
    on_dump_stack(dump_body);
    snapshot_unclaim();
}

/* The first CPU to take an NMI (and no dump of an NMI just ended) dumps. */
static bool nmi_is_new(void)
{
    uint64_t burst = tsc_from_us(NMI_BURST_MS * 1000ull);
    uint32_t idle = 0;
    if (nmi_end_tsc && rdtsc() - nmi_end_tsc < burst)
        return false;
    if (!__atomic_compare_exchange_n(&nmi_busy, &idle, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    if (nmi_end_tsc && rdtsc() - nmi_end_tsc < burst) {
        __atomic_store_n(&nmi_busy, 0, __ATOMIC_RELEASE);
        return false;
    }
    return true;
}

/* An NMI sent to every CPU arrives at each a little apart: let them all
 * record where they were before the dump pauses tracing (their events
 * would be refused), waiting at most NMI_GATHER_MS. */
static void nmi_gather(uint32_t me_cpu)
{
    uint64_t t0 = nmi_tsc[me_cpu], window = tsc_from_us(NMI_GATHER_MS * 1000ull);
    for (uint32_t i = 0; i < MAX_CPUS; i++)
        while (cpus[i].online && i != me_cpu && !faulted[i] && nmi_tsc[i] + window < t0 &&
               rdtsc() - t0 < window)
            cpu_relax();
}

/* An NMI within NMI_BURST_MS after an NMI dump ended gives no dump (it
 * is taken as the same NMI); one line per window says so, so that a
 * second press of the button is not met with silence. Never while the
 * NMI's own dump runs (its other CPUs arrive then), never waiting for
 * the console. */
static void say_folded(uint32_t cpu, uint64_t rip)
{
    uint32_t none = 0;
    if (__atomic_load_n(&nmi_busy, __ATOMIC_ACQUIRE) || !nmi_end_tsc ||
        !__atomic_compare_exchange_n(&folded_said, &none, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED) ||
        !console_trylock())
        return;
    char line[LINE_MAX_NMI];
    int n = ksnprintf(line, sizeof line, "NMI cpu=%u rip=%016lx: within %u ms of the last NMI "
                                         "dump, folded into it (no new dump)\n",
                      cpu, rip, NMI_BURST_MS);
    console_write_locked(line, (unsigned long)(n < (int)sizeof line ? n : (int)sizeof line - 1));
    console_unlock();
}

static void nmi(const struct int_frame *f)
{
    uint32_t cpu = this_cpu()->index;
    if (cpu >= MAX_CPUS || faulted[cpu])
        return;                         /* a parked CPU records nothing more */
    trace(EXCEPTION, EXC_NMI, f->rip);
    nmi_tsc[cpu] = rdtsc();
    /* No console output that waits: the console may be held by a dump
     * for half a minute, and this CPU must return at once. */
    if (snapshot_held_here())
        return;                         /* this CPU's own dump carries on */
    if (!nmi_is_new()) {
        say_folded(cpu, f->rip);
        return;
    }
    __atomic_store_n(&folded_said, 0, __ATOMIC_RELAXED);
    kprintf("NMI cpu=%u rip=%016lx\n", cpu, f->rip);
    nmi_gather(cpu);
    act(cpu, EXC_NMI, "nmi", false);
    nmi_end_tsc = rdtsc();
    __atomic_store_n(&nmi_busy, 0, __ATOMIC_RELEASE);
}

void exception_handle(struct int_frame *f)
{
    if (!gs_ready()) {                  /* before this CPU's own data: report only */
        report(f, 0);
        cpu_park();
    }
    if (f->vector == EXC_NMI) {
        nmi(f);
        return;
    }
    uint32_t cpu = this_cpu()->index;
    trace(EXCEPTION, f->vector, f->rip);
    if (cpu < MAX_CPUS)
        faulted[cpu] = 1;
    report(f, cpu);
    if (snapshot_held_here()) {
        kprintf("EXCEPTION cpu=%u hit its own dump: abandoned (no DUMP END), rings and "
                "console released\n",
                cpu);
        snapshot_abandon();
        stream_dump_abandoned();
    } else {
        act(cpu, f->vector, "fault", true);
    }
    kprintf("EXCEPTION cpu=%u halted; other CPUs continue\n", cpu);
    hand_over_keys(cpu);
    console_unlock_all();               /* it may have faulted inside a kprintf */
    cpu_park();
}
