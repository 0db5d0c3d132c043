/* smp.c — AP bring-up as one explicit protocol.
 *
 * Policy:
 *  1. The CPUs are the MADT's ENABLED entries. The BSP is the entry whose
 *     APIC ID is our own (never "the first entry"). CPU indices are dense:
 *     the BSP is 0, the others follow in MADT order. APIC IDs may have gaps.
 *  2. At most `limit` CPUs run (MAX_CPUS, maxcpus=, nosmp). The rest are
 *     never sent an IPI; they are counted and named as parked.
 *  3. The chosen APs form the pending set and are started in parallel:
 *     a targeted INIT to each (never a broadcast, which would also wake
 *     CPUs the firmware disabled), the 10 ms INIT wait only on CPUs old
 *     enough to need it, a STARTUP IPI to each, 200 us, and a second
 *     STARTUP only to those not yet arrived. The APIC error status is
 *     cleared before and checked after every IPI.
 *     Each AP's boot stack and GDT/TSS come from the memory map, as many
 *     as APs are started, before the first IPI; the bring-up's time, first
 *     INIT to last arrival, is said on the console.
 *  4. We wait at most SMP_TIMEOUT_MS for the pending set to empty
 *     (SMP_TIMEOUT_VIRTUAL_MS under a hypervisor, CPUID.1:ECX bit 31: a
 *     virtual CPU runs when its host schedules it, and an emulator on a
 *     busy host took 2 s to start 64). An AP
 *     still missing then is sent INIT (parked), named on the console, and
 *     counted as failed; the boot goes on with the others. An AP that
 *     arrives after being given up on halts itself.
 *  5. An AP that is up halts until the boot CPU releases them all with one
 *     broadcast IPI: spinning, each would hold a core of a real machine's
 *     sibling thread, and under QEMU's TCG each PAUSE takes the emulator's
 *     one lock, which the STARTUP IPIs still to be sent need too (512
 *     spinning vCPUs on two host cores: bring-up 35 s, one AP given up).
 */
#include "cpus/smp.h"
#include "arch/cpu.h"
#include "arch/gdt.h"
#include "arch/idt.h"
#include "arch/lapic.h"
#include "arch/pat.h"
#include "arch/percpu.h"
#include "lib/format.h"
#include "lib/kassert.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define SMP_TIMEOUT_MS         2000
#define SMP_TIMEOUT_VIRTUAL_MS 10000
#define INIT_DELAY_US          10000
#define SIPI_GAP_US            200
#define XAPIC_MAX_ID           0xFE
#define PARKED_LIST_LEN        256      /* APIC ids named on the parked line */
#define PARKED_ID_LEN          12       /* " 4294967295" and its NUL */
#define PARKED_MORE_LEN        32
#define AP_STACK_SIZE          16384    /* must match boot/layout.inc */
#define AP_STACK_ALIGN         4096

enum cpu_state { CPU_UNUSED,
                 CPU_PENDING,
                 CPU_ONLINE,
                 CPU_FAILED };

extern char tramp_start[], tramp_end[];
extern char tramp_gdt[], tramp_gdtr[], tramp_pm32_jmp[], tramp_lm64_jmp[];
extern char tramp_cr3[], tramp_entry64[], tramp_pm32[], tramp_lm64[];
extern char ap_long_entry[];
extern uint64_t ap_stack_base;        /* boot/ap_entry.asm: the APs' stacks */
extern uint32_t ap_stack_count;

static uint32_t apic_ids[MAX_CPUS];
static volatile uint8_t state[MAX_CPUS];
static uint32_t slots;
static volatile uint32_t released;
static uint64_t madt_lapic;
static ap_online_fn ap_online;        /* main.c's, given to smp_start */
static uint8_t *ap_tables;            /* APs' GDT/TSS: CPU i's at (i - 1) * gdt_cpu_bytes() */

int smp_index_of(uint32_t apic_id)
{
    for (uint32_t i = 0; i < slots; i++)
        if (apic_ids[i] == apic_id)
            return (int)i;
    return -1;
}

uint32_t smp_slots(void) { return slots; }

/* Intel family 6 and later, AMD family 0xF and later, need no INIT wait. */
static bool needs_init_delay(void)
{
    struct cpuid_regs v = cpuid(0, 0), f = cpuid(1, 0);
    uint32_t family = (f.eax >> 8) & 0xF;
    if (family == 0xF)
        family += (f.eax >> 20) & 0xFF;
    bool intel = v.ebx == 0x756E6547;     /* "Genu" */
    bool amd = v.ebx == 0x68747541;       /* "Auth" */
    return !((intel && family >= 6) || (amd && family >= 0xF));
}

static uint32_t install_trampoline(void)
{
    uint32_t page = mem_low_page();
    if (!page)
        return 0;
    uint8_t *dst = (uint8_t *)(uintptr_t)page;
    size_t size = (size_t)(tramp_end - tramp_start);
    memcpy(dst, tramp_start, size);
#define AT(sym)   (dst + ((sym) - tramp_start))
#define PHYS(sym) (page + (uint32_t)((sym) - tramp_start))
    uint32_t gdt = PHYS(tramp_gdt), pm32 = PHYS(tramp_pm32), lm64 = PHYS(tramp_lm64);
    memcpy(AT(tramp_gdtr) + 2, &gdt, 4);
    memcpy(AT(tramp_pm32_jmp) + 2, &pm32, 4);
    memcpy(AT(tramp_lm64_jmp) + 1, &lm64, 4);
    uint64_t cr3 = read_cr3(), entry = (uint64_t)(uintptr_t)ap_long_entry;
    memcpy(AT(tramp_cr3), &cr3, 8);
    memcpy(AT(tramp_entry64), &entry, 8);
#undef AT
#undef PHYS
    return page;
}

static void ipi(uint32_t index, uint32_t icr)
{
    lapic_read_esr();
    bool sent = lapic_send_ipi(apic_ids[index], icr);
    uint32_t esr = lapic_read_esr();
    if (!sent || esr)
        kprintf("smp: IPI 0x%x to CPU %u (APIC id %u): %s esr=0x%x\n", icr, index,
                apic_ids[index], sent ? "delivery error" : "ICR stuck busy", esr);
}

static uint32_t count_pending(void)
{
    uint32_t n = 0;
    for (uint32_t i = 1; i < slots; i++)
        n += __atomic_load_n(&state[i], __ATOMIC_ACQUIRE) == CPU_PENDING;
    return n;
}

static void send_startups(uint32_t page)
{
    uint32_t sipi = ICR_STARTUP | ICR_ASSERT | (page >> 12);
    for (uint32_t i = 1; i < slots; i++)
        ipi(i, ICR_INIT | ICR_ASSERT);
    if (needs_init_delay())
        tsc_delay_us(INIT_DELAY_US);
    for (uint32_t i = 1; i < slots; i++)
        ipi(i, sipi);
    tsc_delay_us(SIPI_GAP_US);
    for (uint32_t i = 1; i < slots; i++)
        if (state[i] == CPU_PENDING)
            ipi(i, sipi);
}

static uint32_t wait_and_park(void)
{
    uint32_t ms = cpuid(1, 0).ecx & CPUID1_HYPERVISOR ? SMP_TIMEOUT_VIRTUAL_MS : SMP_TIMEOUT_MS;
    struct deadline end = deadline_in_us(ms * 1000ull);
    while (count_pending() && !deadline_passed(end))
        cpu_relax();
    uint32_t failed = 0;
    for (uint32_t i = 1; i < slots; i++) {
        uint8_t expect = CPU_PENDING;
        if (__atomic_compare_exchange_n(&state[i], &expect, CPU_FAILED, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            ipi(i, ICR_INIT | ICR_ASSERT);
            kprintf("smp: CPU %u (APIC id %u) did not start within %u ms; parked\n",
                    i, apic_ids[i], ms);
            failed++;
        }
    }
    return failed;
}

/* One console line: as many APIC ids as fit, then "... (N more)" for the
 * rest (those that did not fit, and those beyond the MADT entries kept). */
static void name_parked(const struct madt_info *m, uint32_t bsp, uint32_t parked, uint32_t limit)
{
    if (!parked)
        return;
    char list[PARKED_LIST_LEN], more[PARKED_MORE_LEN] = "";
    size_t n = 0;
    uint32_t named = 0;
    list[0] = '\0';
    for (uint32_t i = 0; i < m->stored && n + PARKED_ID_LEN < sizeof list; i++)
        if (m->cpus[i].apic_id != bsp && smp_index_of(m->cpus[i].apic_id) < 0) {
            n += (size_t)ksnprintf(list + n, sizeof list - n, " %u", m->cpus[i].apic_id);
            named++;
        }
    if (named < parked)
        ksnprintf(more, sizeof more, " ... (%u more)", parked - named);
    kprintf("smp: %u CPUs left parked (limit %u): APIC ids%s%s\n", parked, limit, list, more);
}

/* Assign CPU indices: BSP first, then MADT order, up to the limit. */
static uint32_t choose(const struct madt_info *m, uint32_t bsp, uint32_t limit)
{
    apic_ids[0] = bsp;
    slots = 1;
    uint32_t skipped_ids = 0;
    for (uint32_t i = 0; i < m->stored && slots < limit; i++) {
        uint32_t id = m->cpus[i].apic_id;
        if (id == bsp || smp_index_of(id) >= 0)
            continue;
        if (id > XAPIC_MAX_ID && !lapic_x2apic()) {
            skipped_ids++;               /* unreachable without x2APIC */
            continue;
        }
        apic_ids[slots] = id;
        state[slots++] = CPU_PENDING;
    }
    if (skipped_ids)
        kprintf("smp: %u CPUs have APIC ids above 254 and need x2APIC; not started\n",
                skipped_ids);
    return slots;
}

/* Stacks and GDT/TSS for slots - 1 APs, from the memory map. */
static bool alloc_ap_state(void)
{
    uint64_t n = slots - 1;
    void *stacks = mem_alloc(n * AP_STACK_SIZE, AP_STACK_ALIGN);
    ap_tables = mem_alloc(n * gdt_cpu_bytes(), 64);
    if (!stacks || !ap_tables)
        return false;
    ap_stack_base = (uint64_t)(uintptr_t)stacks;
    __atomic_store_n(&ap_stack_count, (uint32_t)n, __ATOMIC_RELEASE);
    return true;
}

static void give_up_all(void)
{
    for (uint32_t i = 1; i < slots; i++)
        state[i] = CPU_FAILED;
}

static void woken(struct int_frame *f)
{
    (void)f;
    lapic_eoi();
}

void smp_start(const struct madt_info *m, uint32_t limit, struct smp_summary *out,
               ap_online_fn online)
{
    ap_online = online;
    idt_set_handler(VEC_SMP_WAKE, woken);
    uint32_t bsp = lapic_id();
    madt_lapic = m->lapic_addr;
    state[0] = CPU_ONLINE;
    cpus[0].apic_id = bsp;
    cpus[0].online = 1;
    choose(m, bsp, limit ? limit : 1);
    uint32_t found = m->enabled ? m->enabled : 1;
    uint32_t failed = 0;
    uint64_t took_us = 0;
    if (slots > 1) {
        uint32_t page = install_trampoline();
        if (!page) {
            kprintf("smp: no free page below 1 MiB for the AP trampoline; BSP only\n");
            give_up_all();
            failed = slots - 1;
        } else if (!alloc_ap_state()) {
            kprintf("smp: no memory for %u APs' stacks and tables (%lu KiB); BSP only\n",
                    slots - 1, (uint64_t)(slots - 1) * (AP_STACK_SIZE + gdt_cpu_bytes()) / 1024);
            give_up_all();
            failed = slots - 1;
        } else {
            uint64_t t0 = rdtsc();
            send_startups(page);
            failed = wait_and_park();
            took_us = tsc_to_us(rdtsc() - t0);
        }
    }
    *out = (struct smp_summary){ .found = found, .online = slots - failed, .parked = found > slots ? found - slots : 0, .failed = failed, .slots = slots };
    cpus_online = out->online;
    out->bringup_us = took_us;
    if (slots > 1)
        kprintf("smp: %u CPUs online in %lu us (%u started in parallel, %u failed)\n",
                out->online, took_us, slots - 1, failed);
    name_parked(m, bsp, out->parked, limit);
}

void smp_release(void)
{
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    if (slots > 1)
        lapic_send_ipi(0, ICR_FIXED | ICR_ASSERT | ICR_ALL_BUT_SELF | VEC_SMP_WAKE);
}

/* Interrupts are off here: a release between the check and HLT stays
 * pending, and STI's one-instruction shadow lets HLT take it. */
void smp_wait_release(void)
{
    while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
        __asm__ volatile("sti; hlt; cli" ::: "memory");
}

/* First C code of an AP (from boot/ap_entry.asm, on its own stack). */
void ap_main(void)
{
    lapic_init(madt_lapic);
    int idx = smp_index_of(lapic_id());
    uint8_t expect = CPU_PENDING;
    if (idx <= 0 || !__atomic_compare_exchange_n(&state[idx], &expect, CPU_ONLINE, false,
                                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        cpu_park();                      /* not wanted, or given up on */
    kassert((uint32_t)idx < MAX_CPUS);   /* slots never exceed cpus[] */
    percpu_install((uint32_t)idx);
    cpus[idx].apic_id = apic_ids[idx];
    cpus[idx].online = 1;
    gdt_init_cpu(ap_tables + (uint64_t)(idx - 1) * gdt_cpu_bytes());
    pat_init();                          /* the same PAT on every CPU (SDM §12.12.4) */
    idt_load();
    ap_online((uint32_t)idx);
}
