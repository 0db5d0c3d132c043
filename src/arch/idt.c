/* idt.c — 64-bit interrupt gates for all 256 vectors (SDM vol. 3 §6.14). */
#include "arch/idt.h"
#include "arch/extable.h"
#include "arch/gdt.h"
#include "arch/lapic.h"

#define GATE_INTERRUPT 0x8E           /* present, DPL 0, 64-bit interrupt gate */

struct idt_gate {
    uint16_t off_lo, selector;
    uint8_t ist, type;
    uint16_t off_mid;
    uint32_t off_hi, zero;
} __attribute__((packed));

extern const uint64_t isr_table[256];

static struct idt_gate idt[256] __attribute__((aligned(16)));
static int_handler handlers[256];
static int_handler exception_handler;

static uint8_t ist_for(unsigned v)
{
    switch (v) {
    case EXC_DOUBLE_FAULT:  return IST_DOUBLE_FAULT;
    case EXC_NMI:           return IST_NMI;
    case EXC_MACHINE_CHECK: return IST_MACHINE_CHECK;
    default:                return 0;
    }
}

void idt_init(int_handler exceptions)
{
    exception_handler = exceptions;
    for (unsigned v = 0; v < 256; v++) {
        uint64_t a = isr_table[v];
        idt[v] = (struct idt_gate){
            .off_lo = a & 0xFFFF,
            .selector = GDT_KCODE,
            .ist = ist_for(v),
            .type = GATE_INTERRUPT,
            .off_mid = (a >> 16) & 0xFFFF,
            .off_hi = a >> 32,
        };
    }
}

void idt_load(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr = {
        sizeof idt - 1, (uint64_t)(uintptr_t)idt
    };
    __asm__ volatile("lidt %0" ::"m"(idtr));
}

void idt_set_handler(uint8_t vector, int_handler h)
{
    handlers[vector] = h;
}

void interrupt_dispatch(struct int_frame *f)
{
    unsigned v = (unsigned)f->vector;
    uint64_t fixup = v == EXC_GP ? extable_fixup(f->rip) : 0;
    if (fixup) {
        f->rip = fixup;                 /* a *_safe access faulted: it returns false */
    } else if (v < 32) {
        exception_handler(f);
    } else if (handlers[v]) {
        handlers[v](f);
    } else if (v == VEC_SPURIOUS || (v >= VEC_PIC_BASE && v < VEC_PIC_BASE + 16)) {
        /* LAPIC spurious vector and masked-PIC spurious IRQs: no EOI. */
    } else {
        lapic_eoi();                    /* a stray device interrupt: ignore it */
    }
}
