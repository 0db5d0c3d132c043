/* gdt.h — each CPU's own GDT and TSS. The TSS exists for its interrupt
 * stack table: #DF, NMI and #MC run on their own stacks, so a kernel
 * stack overflow still reports instead of triple-faulting. */
#ifndef ARCH_GDT_H
#define ARCH_GDT_H
#include <stddef.h>
#include <stdint.h>

#define GDT_KCODE         0x08                /* must match boot/layout.inc */
#define GDT_KDATA         0x10
#define GDT_TSS           0x18

#define IST_DOUBLE_FAULT  1
#define IST_NMI           2
#define IST_MACHINE_CHECK 3

/* Build and load the calling CPU's GDT and TSS in `mem` (gdt_cpu_bytes()
 * bytes, zeroed, 64-byte aligned, its own), or NULL on the boot CPU:
 * its tables are static. */
void gdt_init_cpu(void *mem);
size_t gdt_cpu_bytes(void);

#endif
