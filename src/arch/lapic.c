/* lapic.c — local APIC access (SDM vol. 3 ch. 11). */
#include "arch/lapic.h"
#include "arch/cpu.h"

#define APIC_BASE_EXTD  (1u << 10)     /* x2APIC mode */
#define APIC_BASE_EN    (1u << 11)
#define APIC_BASE_ADDR  0xFFFFFF000ull

/* Register offsets in the xAPIC page; x2APIC MSR = 0x800 + offset / 16. */
#define REG_ID          0x020
#define REG_TPR         0x080
#define REG_EOI         0x0B0
#define REG_SVR         0x0F0
#define REG_ESR         0x280
#define REG_ICR_LO      0x300
#define REG_ICR_HI      0x310
#define REG_LVT_TIMER   0x320
#define REG_LVT_LINT0   0x350
#define REG_LVT_LINT1   0x360
#define REG_LVT_ERROR   0x370
#define REG_TIMER_INIT  0x380
#define REG_TIMER_CUR   0x390
#define REG_TIMER_DIV   0x3E0

#define SVR_ENABLE      0x100
#define SPURIOUS_VECTOR 0xFF
#define LVT_MASKED      0x10000
#define LVT_PERIODIC    0x20000
#define LVT_DM_NMI      0x400             /* delivery mode NMI (SDM §11.5.1) */
#define ICR_PENDING     0x1000
#define TIMER_DIV_16    0x3
#define ICR_SPINS       1000000
#define CALIBRATE_MS    10

static volatile uint32_t *mmio;
static bool x2;
static uint64_t timer_hz;

static uint32_t rd(uint32_t reg)
{
    return x2 ? (uint32_t)rdmsr(0x800 + reg / 16) : mmio[reg / 4];
}

static void wr(uint32_t reg, uint32_t v)
{
    if (x2)
        wrmsr(0x800 + reg / 16, v);
    else
        mmio[reg / 4] = v;
}

void lapic_init(uint64_t mmio_base)
{
    uint64_t base = rdmsr(MSR_APIC_BASE);
    /* The boot CPU's mode is every CPU's: firmware that hands over in
     * x2APIC mode (APIC ids above 254) normally leaves the APs so too; one
     * that is not is switched, xAPIC -> x2APIC by setting EXTD with EN set
     * (SDM §11.12.5, the one legal transition between the two). */
    if (x2 && !(base & APIC_BASE_EXTD)) {
        wrmsr(MSR_APIC_BASE, base | APIC_BASE_EN);
        base |= APIC_BASE_EN | APIC_BASE_EXTD;
        wrmsr(MSR_APIC_BASE, base);
    }
    x2 = base & APIC_BASE_EXTD;
    if (!x2) {
        uint64_t addr = base & APIC_BASE_ADDR;
        mmio = (volatile uint32_t *)(uintptr_t)(addr ? addr : mmio_base);
        if (!(base & APIC_BASE_EN))
            wrmsr(MSR_APIC_BASE, base | APIC_BASE_EN);
    }
    wr(REG_TPR, 0);
    wr(REG_LVT_TIMER, LVT_MASKED);
    wr(REG_LVT_ERROR, LVT_MASKED);
    /* LINT1 is the NMI pin on PCs (the MADT's LAPIC NMI entries nearly
     * always say so): front-panel/BMC NMIs and QEMU inject-nmi arrive
     * there, and exception.c turns them into one dump. */
    wr(REG_LVT_LINT1, LVT_DM_NMI);
    wr(REG_SVR, SVR_ENABLE | SPURIOUS_VECTOR);
    wr(REG_ESR, 0);
}

bool lapic_x2apic(void) { return x2; }

uint32_t lapic_id(void)
{
    return x2 ? rd(REG_ID) : rd(REG_ID) >> 24;
}

void lapic_eoi(void)
{
    wr(REG_EOI, 0);
}

uint32_t lapic_read_esr(void)
{
    wr(REG_ESR, 0);                     /* a write latches the current errors */
    return rd(REG_ESR);
}

bool lapic_send_ipi(uint32_t apic_id, uint32_t icr_low)
{
    if (x2) {
        wrmsr(0x830, ((uint64_t)apic_id << 32) | icr_low);
        return true;
    }
    for (unsigned i = 0; rd(REG_ICR_LO) & ICR_PENDING; i++) {
        if (i == ICR_SPINS)
            return false;
        cpu_relax();
    }
    wr(REG_ICR_HI, apic_id << 24);
    wr(REG_ICR_LO, icr_low);
    return true;
}

void lapic_timer_calibrate(uint64_t tsc_hz)
{
    wr(REG_TIMER_DIV, TIMER_DIV_16);
    wr(REG_LVT_TIMER, LVT_MASKED);
    wr(REG_TIMER_INIT, 0xFFFFFFFFu);
    uint64_t start = rdtsc(), window = tsc_hz / 1000 * CALIBRATE_MS;
    while (rdtsc() - start < window)
        cpu_relax();
    uint32_t elapsed = 0xFFFFFFFFu - rd(REG_TIMER_CUR);
    uint64_t tsc_elapsed = rdtsc() - start;
    wr(REG_TIMER_INIT, 0);
    timer_hz = tsc_elapsed ? (uint64_t)elapsed * tsc_hz / tsc_elapsed : 0;
}

uint64_t lapic_timer_hz(void) { return timer_hz; }

void lapic_timer_periodic(uint8_t vector, uint32_t count)
{
    wr(REG_TIMER_DIV, TIMER_DIV_16);
    wr(REG_LVT_TIMER, LVT_PERIODIC | vector);
    wr(REG_TIMER_INIT, count ? count : 1);
}

void lapic_timer_stop(void)
{
    wr(REG_LVT_TIMER, LVT_MASKED);
    wr(REG_TIMER_INIT, 0);
}
