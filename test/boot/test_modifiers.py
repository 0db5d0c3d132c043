"""Ctrl and Alt on the PS/2 keyboard (issue #10, smaller findings).

Ctrl+C, right-Ctrl+C, Alt+D and AltGr+D are combinations, not hotkeys:
no clear, no dump; each counts as one ignored key (the modifier presses
themselves count as nothing). The keys go through QMP send-key, i.e. the
emulated i8042 with real scan codes, E0 prefixes included.
"""
import unittest

from harness import Machine

COMBOS = [("ctrl", "c"), ("ctrl_r", "c"), ("alt", "d"), ("alt_r", "d")]
STATS_TIMEOUT_S = 30


class Modifiers(unittest.TestCase):

    def test_ctrl_alt_combinations_are_not_hotkeys(self):
        with Machine(self.id(), smp=2) as m:
            m.ready()
            start = len(m.output())
            for keys in COMBOS:
                self.assertEqual(m.sendkey(*keys), {})
            m.sendkey("s")                  # handled after the combinations
            stats = m.wait_for(rb"stats: [^\r\n]*ignored keys (\d+)", STATS_TIMEOUT_S, start=start)
            after = m.text()[m.text().find("\nREADY "):]
            self.assertEqual(m.faults(), [])
        self.assertNotIn("DUMP BEGIN", after, "Alt+D dumped")
        self.assertNotRegex(after, r"rings and counters cleared", "Ctrl+C cleared the rings")
        self.assertEqual(int(stats.group(1)), len(COMBOS), "each combination is one ignored key")


if __name__ == "__main__":
    unittest.main()
