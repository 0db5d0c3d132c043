/* exception.c — report a CPU exception and park the CPU. */
#include "exception.h"
#include "console.h"
#include "cpu.h"
#include "percpu.h"
#include "trace/trace.h"

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

static void report(const struct int_frame *f)
{
    uint32_t cpu = gs_ready() ? this_cpu()->index : 0;
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
    kprintf("EXCEPTION cpu=%u halted; other CPUs continue\n", cpu);
    console_unlock();
}

void exception_handle(struct int_frame *f)
{
    if (f->vector == EXC_NMI)
        return;                         /* e.g. a watchdog: nothing to report */
    if (gs_ready())
        trace(EXCEPTION, f->vector, f->rip);
    report(f);
    cpu_park();
}
