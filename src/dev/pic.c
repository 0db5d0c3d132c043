/* pic.c — remap and mask both 8259s (ICW1-ICW4, then OCW1 = 0xFF). */
#include "dev/pic.h"
#include "arch/cpu.h"
#include "arch/idt.h"

#define PIC1_CMD       0x20
#define PIC1_DATA      0x21
#define PIC2_CMD       0xA0
#define PIC2_DATA      0xA1
#define ICW1_INIT_ICW4 0x11
#define ICW4_8086      0x01

void pic_disable(void)
{
    outb(PIC1_CMD, ICW1_INIT_ICW4);
    outb(PIC2_CMD, ICW1_INIT_ICW4);
    outb(PIC1_DATA, VEC_PIC_BASE);         /* ICW2: vector base */
    outb(PIC2_DATA, VEC_PIC_BASE + 8);
    outb(PIC1_DATA, 4);                    /* ICW3: slave on IRQ2 */
    outb(PIC2_DATA, 2);
    outb(PIC1_DATA, ICW4_8086);
    outb(PIC2_DATA, ICW4_8086);
    outb(PIC1_DATA, 0xFF);                 /* OCW1: mask all */
    outb(PIC2_DATA, 0xFF);
}
