/* idt.h — the interrupt descriptor table (shared by all CPUs, loaded on
 * each) and the dispatch of every vector.
 *
 * Vectors 0-31 are CPU exceptions: exception.c reports and parks the CPU
 * (NMI is counted and returns). 0x20-0x2F are where the masked 8259 PICs
 * would deliver (spurious IRQ7/15): counted and ignored. Device and IPI
 * vectors get handlers through idt_set_handler(). */
#ifndef IDT_H
#define IDT_H
#include <stdint.h>

#define VEC_PIC_BASE   0x20
#define VEC_TIMER      0x40
#define VEC_IPI_FIRST  0x41
#define VEC_SERIAL     0x60          /* console UART receive, via the I/O APIC */
#define VEC_SPURIOUS   0xFF

struct int_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;   /* pushed by the CPU */
};

typedef void (*int_handler)(struct int_frame *f);

void idt_init(void);                 /* build the table (BSP, once) */
void idt_load(void);                 /* lidt on this CPU */
/* Install `h` for `vector`; the handler sends its own LAPIC EOI. */
void idt_set_handler(uint8_t vector, int_handler h);

#endif
