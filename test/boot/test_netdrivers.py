"""The other NIC drivers of issue 18 under the same network tests as
e1000: virtio-net (modern PCI), a USB CDC-ECM adapter (QEMU usb-net on
its own xHCI) and the igb family with advanced descriptors (QEMU's igb,
an 82576; issue 36). READY arrives over the network with no serial port
and names the NIC, and `d` sent by capture gives a dump that decode
--list calls complete; virtio-net's link follows QEMU's set_link. The
RTL8111 has no QEMU model: test/unit/test_rtl8111.c tests it.

Every network here is QEMU's user-mode network on this machine (see
test_net.py)."""
import os
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from btlib.qemu import launch as qemu
import test_net
from harness import ISO, LOG_DIR

# QEMU's igb (an 82576) arrived in 8.0; this test is verified on QEMU 10
# (scripts/install-deps --test installs it from the backports suite).
IGB_QEMU = (10, 0)


def igb_missing():
    """None when this QEMU's igb is the one verified here, else why not."""
    found = qemu.version()
    if found is None:
        return "qemu-system-x86_64 gives no version"
    if found[:2] < IGB_QEMU:
        return (f"QEMU {found[2]}: the igb test is verified on QEMU 10 (igb since 8.0; "
                "scripts/install-deps --test installs 10 where the distribution offers it)")
    return None


NO_IGB = igb_missing()


class NetDrivers(test_net.NetCase):

    def setUp(self):
        os.makedirs(LOG_DIR, exist_ok=True)

    def capture_qemu(self, model, link_later=False):
        return test_net.NetOverCapture.capture_qemu(self, model, link_later=link_later)

    def test_virtio_ready_and_dump_without_serial(self):
        self.assertEqual(self.capture_qemu("virtio")["net"], "virtio:00:03.0")

    def test_usb_ready_and_dump_without_serial(self):
        self.assertRegex(self.capture_qemu("usb")["net"], r"^usb:00:0[0-9a-f]\.0-\d+$")

    @unittest.skipIf(NO_IGB, NO_IGB)
    def test_igb_ready_and_dump_without_serial(self):
        # capture --qemu --net igb, as a user would run it: QEMU's 82576
        # takes advanced descriptors only, so READY, the console, the `d`
        # key in and the whole dump out all go through the igb family's
        # path. Its PHY renegotiates after the reset (half a second in
        # QEMU), so READY may say ip=nolink before the link line.
        ready = self.capture_qemu("igb", link_later=True)
        self.assertEqual(ready["net"], "igb:00:03.0")

    @unittest.skipIf(NO_IGB, NO_IGB)
    def test_igb_no_link_then_cable_plugged(self):
        # STATUS.LU after the PHY renegotiates once QEMU's set_link
        # plugs the cable.
        self.link_down_then_plugged("igb")

    def test_virtio_no_link_then_cable_plugged(self):
        # VIRTIO_NET_F_STATUS: the device configuration's link bit.
        self.link_down_then_plugged("virtio")

    def test_virtio_modern_only_behind_access_platform(self):
        # A modern-only device that offers VIRTIO_F_ACCESS_PLATFORM refuses
        # FEATURES_OK unless the driver takes it (as clouds' devices do).
        m, info = self.boot(smp=1, extra=["-netdev", "user,id=n0", "-device",
                                          "virtio-net-pci,netdev=n0,disable-legacy=on,"
                                          "iommu_platform=on"])
        self.assertTrue(info["net"].startswith("virtio:"), info)
        m.wait_for(test_net.ADDRESS, 60, start=0)

    def test_usb_adapter_plugged_after_boot_is_named(self):
        # The network chose virtio-net at boot; a USB adapter plugged in
        # later is enumerated and named, and the NIC in use stays.
        m, info = self.boot(smp=1, nic="virtio", extra=["-device", "qemu-xhci,id=xhci",
                                                        "-netdev", "user,id=n1"])
        self.assertTrue(info["net"].startswith("virtio:"), info)
        start = len(m.output())
        self.assertEqual(m.qmp().command("device_add", driver="usb-net", bus="xhci.0",
                                         netdev="n1", id="late"), {})
        m.wait_for(rb"usb: \S+ port \d+: network adapter 0525:a4a2 \(CDC-ECM, full speed\), "
                   rb"MAC [0-9a-f:]+: plugged in after boot; the network keeps the NIC it chose",
                   60, start=start)
        self.assertTrue(m.dump().complete)
        self.assertEqual(m.faults(), [])

    def test_usb_adapter_beside_the_boot_stick(self):
        # One xHCI for the stick the machine booted from and the network
        # adapter: a dump goes over the adapter, then onto the stick.
        tmp = tempfile.mkdtemp(prefix="bt-stick-")
        self.addCleanup(shutil.rmtree, tmp, True)
        img = os.path.join(tmp, "stick.img")
        shutil.copyfile(ISO, img)
        port = test_net.free_port()
        cap = test_net.Capture(self.id(), port)
        try:
            m, info = self.boot(fw="bios", media="usb", smp=2, iso=img, stick_writable=True,
                                cmdline=f"net.key={test_net.LAB_KEY} net.to={test_net.HOST}:{port}",
                                extra=["-netdev", "user,id=n0", "-device",
                                       "usb-net,bus=xhci.0,netdev=n0"])
            self.assertTrue(info["net"].startswith("usb:"), info)
            m.wait_for(rb"blockdev: \S+ registered", 60, start=0)
            m.wait_for(test_net.ADDRESS, 60, start=0)
            m.wait_for(test_net.HEARD, 60, start=0)
            start = len(m.output())
            serial = m.dump()
            m.wait_for(test_net.CONFIRMED, 60, start=start)
            m.wait_for(rb"dumpstick: dump #1 written to", 60, start=start)
        finally:
            cap.stop()
        self.check_dump(serial, online=2)
        self.same_events(serial, self.check_net_dump(cap.log()))

    def test_usb_adapter_left_alone_with_net_off(self):
        m, info = self.boot(smp=1, nic="usb", cmdline="net=off")
        self.assertEqual((info["net"], info["ip"]), ("off", "none"))
        self.assertRegex(m.output(), rb"usb: [0-9a-f:.]+ port \d+: device 0525:a4a2: left alone "
                                     rb"\(net=off\)")

    def dump_both_ways(self, nic, cmdline="", fill_s=0):
        """A dump over the network equals the serial dump of the same snapshot."""
        port = test_net.free_port()
        cap = test_net.Capture(self.id(), port)
        try:
            m, info = self.net_boot(port, nic=nic, smp=2, cmdline=cmdline)
            m.wait_for(test_net.ADDRESS, 60, start=0)   # READY does not wait for DHCP
            self.heard(m)
            time.sleep(fill_s)
            start = len(m.output())
            serial = m.dump()
            m.wait_for(test_net.CONFIRMED, 60, start=start)
        finally:
            cap.stop()
        self.check_dump(serial, online=2)
        self.same_events(serial, self.check_net_dump(cap.log()))
        return info

    def test_virtio_dump_equals_serial_dump(self):
        self.assertEqual(self.dump_both_ways("virtio")["net"], "virtio:00:03.0")

    def test_usb_dump_equals_serial_dump(self):
        self.assertTrue(self.dump_both_ways("usb")["net"].startswith("usb:"))

    def test_usb_large_dump_equals_serial_dump(self):
        # Some thousand datagrams through the bulk endpoints both ways.
        self.dump_both_ways("usb", "timer_hz=2000 trace.events=8192", fill_s=4)

    def test_usb_fault_dump_arrives_over_the_network(self):
        # CPU 1 faults: its dump goes out through the xHCI from CPU 1
        # (usbstack.h: the USB code is taken from the boot CPU's key poll).
        port = test_net.free_port()
        cap = test_net.Capture(self.id(), port)
        try:
            m, _ = self.net_boot(port, nic="usb", smp=2, cmdline="debug.fault=1")
            m.wait_for(test_net.CONFIRMED, 120, start=0)
        finally:
            cap.stop()
        d = self.check_net_dump(cap.log(), 0)
        self.assertEqual((d.header.get("trigger"), d.header.get("fault_cpu")), ("fault", "1"))
