/* nicpci.c — the PCI network drivers, in the order they are tried (nicpci.h). */
#include "net/nicpci.h"
#include <stddef.h>
#include "lib/kprintf.h"
#include "net/e1000.h"
#include "net/rtl8111pci.h"
#include "net/virtio_net.h"

#define PCI_CLASS_NETWORK  0x02
#define PCI_SUBCLASS_ETHER 0x00

static const struct nicpci_driver drivers[] = {
    { "e1000", e1000_match, e1000_start },
    { "virtio", virtio_net_match, virtio_net_start },
    { "rtl8111", rtl8111_match, rtl8111_pci_start },
};

static const struct nicpci_driver *driver_for(const struct pci_func *f)
{
    for (unsigned i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
        if (drivers[i].match(f))
            return &drivers[i];
    return NULL;
}

unsigned nicpci_probe(struct nic *nics, unsigned max)
{
    unsigned started = 0;
    for (unsigned i = 0; i < pci_count(); i++) {
        const struct pci_func *f = pci_func_at(i);
        const struct nicpci_driver *d = driver_for(f);
        if (!d) {
            if (f->class == PCI_CLASS_NETWORK && f->subclass == PCI_SUBCLASS_ETHER)
                kprintf("net: %02x:%02x.%u %04x:%04x: an Ethernet controller no driver here "
                        "takes; skipped (docs/real-hardware.md)\n",
                        f->bus, f->dev, f->fn,
                        f->vendor, f->device);
            continue;
        }
        if (started == max) {
            kprintf("net: %02x:%02x.%u %04x:%04x: more than %u network controllers; "
                    "skipped\n",
                    f->bus, f->dev, f->fn, f->vendor, f->device, max);
            continue;
        }
        nics[started] = (struct nic){ 0 };
        if (d->start(f, &nics[started]))
            started++;
    }
    return started;
}
