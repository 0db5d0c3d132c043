/* machine.c — the MACHINE line and the dump's %I items. */
#include "recorder/machine.h"
#include "arch/cpuident.h"
#include "firmware/bootdev.h"
#include "firmware/smbiosfind.h"
#include "lib/format.h"
#include "lib/kprintf.h"

enum { ITEM_MAX = 20 };

static struct cpu_ident cpu;
static struct smbios_found smb;
static const char *boot = "unknown";
static char family[12], model[12], stepping[12], ucode[20], smbios_what[96], memory[24];
static struct dump_extra items[ITEM_MAX];
static unsigned n_items;

static void add(const char *key, const char *val)
{
    if (n_items < ITEM_MAX)
        items[n_items++] = (struct dump_extra){ key, val, 0 };
}

static void add_smbios(void)
{
    if (!smb.present) {
        ksnprintf(smbios_what, sizeof smbios_what, "none: %s", smb.why_not);
        add("smbios", smbios_what);
        return;
    }
    ksnprintf(smbios_what, sizeof smbios_what, "%u.%u %s%s", smb.entry.major,
              smb.entry.minor, smb.where, smb.id.truncated ? " truncated" : "");
    add("smbios", smbios_what);
    add("bios.vendor", smb.id.bios_vendor);
    add("bios.version", smb.id.bios_version);
    add("bios.date", smb.id.bios_date);
    add("system.vendor", smb.id.sys_vendor);
    add("system.product", smb.id.sys_product);
    add("system.version", smb.id.sys_version);
    add("board.vendor", smb.id.board_vendor);
    add("board.product", smb.id.board_product);
    add("board.version", smb.id.board_version);
    ksnprintf(memory, sizeof memory, "%lu", (unsigned long)smb.id.memory_mb);
    add("memory_mb", memory);
}

static const struct mb2_info *boot_info;

void machine_init(const struct mb2_info *mb)
{
    boot_info = mb;
    cpuident_read(&cpu);
    smbios_find(mb, &smb);
    boot = bootdev_kind(mb);
    ksnprintf(family, sizeof family, "%u", cpu.family);
    ksnprintf(model, sizeof model, "%u", cpu.model);
    ksnprintf(stepping, sizeof stepping, "%u", cpu.stepping);
    if (cpu.microcode_known)
        ksnprintf(ucode, sizeof ucode, "0x%x", cpu.microcode);
    else
        ksnprintf(ucode, sizeof ucode, "unknown");
    if (cpu.microcode_faulted)
        kprintf("cpu: MSR 0x8B (microcode revision) raised #GP; skipped, cpu.microcode=unknown\n");
    n_items = 0;
    add("cpu.vendor", cpu.vendor);
    add("cpu.brand", cpu.brand);
    add("cpu.family", family);
    add("cpu.model", model);
    add("cpu.stepping", stepping);
    add("cpu.microcode", ucode);
    add_smbios();
    add("boot", boot);
    add("boot.root", bootdev_root(boot_info));
}

/* One value in quotes: a '"' inside becomes '\''. */
static void print_value(const char *key, const char *v)
{
    char buf[SMBIOS_STR_MAX + 32];
    unsigned k = 0;
    for (; *v && k + 1 < sizeof buf; v++)
        buf[k++] = *v == '"' ? '\'' : *v;
    buf[k] = 0;
    kprintf(" %s=\"%s\"", key, buf);
}

void machine_print(void)
{
    console_lock();                     /* one line, written in pieces */
    kprintf("MACHINE");
    for (unsigned i = 0; i < n_items; i++)
        print_value(items[i].key, items[i].str);
    kprintf("\n");
    console_unlock();
}

const struct dump_extra *machine_items(unsigned *n)
{
    *n = n_items;
    return items;
}

const char *machine_boot(void) { return boot; }
