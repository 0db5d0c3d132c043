"""An EHCI and its companion controllers end to end: a PC without PS/2
(q35,i8042=off) and no xHCI, whose EHCI hands a full-speed usb-kbd (or a
hub with it behind) to a UHCI or OHCI companion (PORT_OWNER); its keys
are hotkeys and d from it dumps:

  - ich9-usb-ehci1 with its ich9-usb-uhci1..3 companions, as on Intel
    boards, under BIOS and (behind a hub) UEFI;
  - ich9-usb-ehci1 with pci-ohci companions, as on AMD boards (QEMU's
    plain usb-ehci takes no companions);
  - usb.skip=uhci: the device handed to a companion nothing drives is
    named as not seen.
"""
import unittest

from test_usb_uhci_ohci import UsbKeyboardBoot

# QEMU's usb-kbd also speaks high speed, and an EHCI then keeps it: a
# keyboard for a companion is full speed only, like a real one.
FULL_SPEED = "usb_version=1"
ICH9_UHCI = ["-device", "ich9-usb-ehci1,id=ehci,addr=1d.7,multifunction=on",
             "-device", "ich9-usb-uhci1,masterbus=ehci.0,firstport=0,addr=1d.0,multifunction=on",
             "-device", "ich9-usb-uhci2,masterbus=ehci.0,firstport=2,addr=1d.1",
             "-device", "ich9-usb-uhci3,masterbus=ehci.0,firstport=4,addr=1d.2"]
# Companions come before their EHCI in the slot's functions, as on real
# chipsets (firmware looks for them there).
EHCI_OHCI = ["-device", "ich9-usb-ehci1,id=ehci,addr=5.2",
             "-device", "pci-ohci,masterbus=ehci.0,firstport=0,num-ports=3,addr=5.0,"
                        "multifunction=on",
             "-device", "pci-ohci,masterbus=ehci.0,firstport=3,num-ports=3,addr=5.1"]


class Companions(UsbKeyboardBoot):

    def test_full_speed_keyboard_for_a_skipped_companion_is_named(self):
        # usb.skip=uhci: the EHCI still hands the full-speed keyboard to its
        # UHCI companion, which nothing drives; the console says so (issue
        # 28: it was never named).
        m = self.boot(ICH9_UHCI + ["-device", f"usb-kbd,bus=ehci.0,port=3,{FULL_SPEED}"],
                      cmdline="usb.skip=uhci")
        m.wait_for(rb"usb: 00:1d\.7 ehci: port 3: full-speed device handed to the companion "
                   rb"controller, which is left alone \(usb\.skip=\): it is not seen \(a keyboard "
                   rb"there gives no keys\)", 30, start=0)
        self.assertIn("usb: 00:1d.1 uhci: left alone (usb.skip=)", m.text())

    def test_ich9_uhci_companion(self):
        m = self.boot(ICH9_UHCI + ["-device", f"usb-kbd,bus=ehci.0,port=3,{FULL_SPEED}"])
        self.assertIn("usb: 00:1d.7 ehci: port 3: full-speed device handed to the companion "
                      "controller", m.text())
        for fn in range(3):
            self.assertIn(f"usb: 00:1d.{fn} uhci: 2 ports", m.text())
        ctrl, port = self.keyboard(m, r"uhci: 2 ports")
        self.assertEqual((ctrl, port), ("00:1d.1", "1"), "EHCI port 3 is uhci2's port 1")
        self.keys_work(m)

    def test_uefi_ich9_uhci_companion_hub(self):
        """A (full-speed) hub on an EHCI port goes to the companion, with
        the keyboard behind it."""
        m = self.boot(ICH9_UHCI + ["-device", "usb-hub,bus=ehci.0,port=6",
                                   "-device", "usb-kbd,bus=ehci.0,port=6.2"], fw="uefi")
        ctrl, port = self.keyboard(m, r"uhci: 2 ports")
        self.assertEqual((ctrl, port), ("00:1d.2", "2.2"), "EHCI port 6 is uhci3's port 2")
        self.assertIn("usb: 00:1d.2 port 2: hub with 8 ports (full speed)", m.text())
        self.keys_work(m)

    def test_ehci_with_ohci_companions(self):
        m = self.boot(EHCI_OHCI + ["-device", f"usb-kbd,bus=ehci.0,port=5,{FULL_SPEED}"])
        self.assertIn("usb: 00:05.2 ehci: port 5: full-speed device handed to the companion "
                      "controller", m.text())
        ctrl, port = self.keyboard(m, r"ohci: 3 ports")
        self.assertEqual((ctrl, port), ("00:05.1", "2"), "EHCI port 5 is the second OHCI's 2")
        self.keys_work(m)


if __name__ == "__main__":
    unittest.main()
