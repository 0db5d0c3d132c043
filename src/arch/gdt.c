/* gdt.c — per-CPU GDT + 64-bit TSS (Intel SDM vol. 3 §3.4.5, §8.7). */
#include "arch/gdt.h"
#include "arch/percpu.h"

#define IST_STACK_SIZE 4096
#define GDT_ENTRIES    5               /* null, code, data, TSS (2 slots) */

struct tss64 {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3, iomap_base;
} __attribute__((packed));

struct cpu_tables {
    uint64_t gdt[GDT_ENTRIES];
    struct tss64 tss;
    uint8_t ist_stacks[3][IST_STACK_SIZE] __attribute__((aligned(16)));
} __attribute__((aligned(64)));

/* The boot CPU's are here (it needs them before memory is known); the
 * APs' come from the memory map, sized by how many start (smp.c). */
static struct cpu_tables bsp_tables;

size_t gdt_cpu_bytes(void) { return sizeof(struct cpu_tables); }

static uint64_t tss_low(uint64_t base, uint32_t limit)
{
    return (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
           (0x89ull << 40) |                    /* present, type 9: available TSS */
           ((uint64_t)(limit >> 16 & 0xF) << 48) | ((base >> 24 & 0xFF) << 56);
}

void gdt_init_cpu(void *mem)
{
    struct cpu_tables *t = mem ? mem : &bsp_tables;
    t->tss = (struct tss64){ 0 };
    for (int i = 0; i < 3; i++)
        t->tss.ist[i] = (uint64_t)(uintptr_t)(t->ist_stacks[i] + IST_STACK_SIZE);
    t->tss.iomap_base = sizeof t->tss;           /* no I/O permission map */

    uint64_t base = (uint64_t)(uintptr_t)&t->tss;
    t->gdt[0] = 0;
    t->gdt[1] = 0x00AF9A000000FFFFull;           /* 64-bit code, DPL 0 */
    t->gdt[2] = 0x00CF92000000FFFFull;           /* data */
    t->gdt[3] = tss_low(base, sizeof t->tss - 1);
    t->gdt[4] = base >> 32;

    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) gdtr = {
        sizeof t->gdt - 1, (uint64_t)(uintptr_t)t->gdt
    };
    __asm__ volatile(
        "lgdt %0\n\t"
        "pushq %1\n\t"
        "leaq 1f(%%rip), %%rax\n\t"
        "pushq %%rax\n\t"
        "lretq\n"
        "1:\n\t"
        "mov %2, %%ax\n\t"
        "mov %%ax, %%ds\n\t"
        "mov %%ax, %%es\n\t"
        "mov %%ax, %%ss\n\t"
        "mov %3, %%ax\n\t"
        "ltr %%ax" ::"m"(gdtr),
        "i"(GDT_KCODE), "i"(GDT_KDATA), "i"(GDT_TSS) : "rax", "memory");
    /* Loading GS with a selector would clear GS_BASE: GS is left alone. */
}
