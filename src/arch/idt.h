/* idt.h — the interrupt descriptor table (shared by all CPUs, loaded on
 * each) and the dispatch of every vector.
 *
 * Vectors 0-31 are CPU exceptions: they go to the handler given to
 * idt_init (exception.c, which reports and parks the CPU; NMI is counted
 * and returns), except a #GP at an instruction the exception fixup table
 * lists (extable.h: rdmsr_safe, wrmsr_safe), which resumes at its fixup. 0x20-0x2F are where the masked 8259 PICs
 * would deliver (spurious IRQ7/15): counted and ignored. Device and IPI
 * vectors get handlers through idt_set_handler(). */
#ifndef ARCH_IDT_H
#define ARCH_IDT_H
#include <stdint.h>

/* Exception vectors (SDM vol. 3 §6.3.1) that get names here. */
#define EXC_NMI           2
#define EXC_DOUBLE_FAULT  8
#define EXC_PAGE_FAULT    14
#define EXC_GP            13
#define EXC_MACHINE_CHECK 18

#define VEC_PIC_BASE      0x20
#define VEC_TIMER         0x40
#define VEC_IPI_FIRST     0x41
#define VEC_SMP_WAKE      VEC_IPI_FIRST /* cpus/smp.c: the APs' release from hlt */
#define VEC_SERIAL        0x60          /* console UART receive, via the I/O APIC */
#define VEC_SPURIOUS      0xFF

struct int_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;   /* pushed by the CPU */
};

typedef void (*int_handler)(struct int_frame *f);

/* Build the table (BSP, once); `exceptions` handles vectors 0-31. */
void idt_init(int_handler exceptions);
void idt_load(void);                 /* lidt on this CPU */
/* Install `h` for `vector`; the handler sends its own LAPIC EOI. */
void idt_set_handler(uint8_t vector, int_handler h);

#endif
