"""The one native boundary (scripts/btlib/native.py) against the library's
own table (decoder/abi.c): every struct and constant the library exports
is declared in Python and the other way round, and a declaration that
drifts from the C (a field's offset or size, a struct's size, a constant)
fails at load with one error naming the struct and the field."""

import ctypes
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode_support import REPO, require_compiled_core

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.dump import model
from btlib.native import library as native


def setUpModule():
    require_compiled_core('the ABI check')


def fresh_load():
    """native.lib() as a first load would run it (its cache emptied)."""
    with mock.patch.object(native, '_lib', None), mock.patch.object(native, '_consts', {}):
        return native.lib()


class Tables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.structs, cls.consts = native.abi_tables(native.lib())

    def test_every_struct_both_ways(self):
        self.assertEqual(sorted(self.structs), sorted(native.STRUCTS))

    def test_every_constant_python_reads_is_exported(self):
        self.assertEqual(sorted(set(native.CONSTANTS) | set(native.LAYOUT)),
                         sorted(self.consts))

    def test_the_declarations_match(self):
        self.assertEqual(native.mismatches(self.structs, self.consts), [])

    def test_every_function_is_declared_once(self):
        lib = native.lib()
        for name, (restype, args) in native.FUNCTIONS.items():
            with self.subTest(name):
                self.assertEqual(len(getattr(lib, name).argtypes), len(args))

    def test_one_cpu_limit(self):
        """The C core and the Python reference take the same CPU numbers."""
        self.assertEqual(native.const('BT_CPU_LIMIT'), model.MAX_CPUS)
        self.assertEqual(model.MAX_CPUS, 1024)

    def test_the_record_is_model_record(self):
        size, fields = self.structs['trace_event']
        self.assertEqual(size, model.RECORD_SIZE)
        offsets = [0]
        for code in model.RECORD.format[1:]:
            offsets.append(offsets[-1] + ctypes.sizeof({'Q': ctypes.c_uint64,
                                                        'I': ctypes.c_uint32,
                                                        'H': ctypes.c_uint16,
                                                        'B': ctypes.c_uint8}[code]))
        self.assertEqual([f[1] for f in fields], offsets[:-1])
        self.assertEqual(model.SEQ_WORD * 4, dict((f[0], f[1]) for f in fields)['seq'])


class Mismatch(unittest.TestCase):
    """A stale declaration fails at load, naming what differs."""

    def load_with(self, structs=None, layout=None):
        table = dict(native.STRUCTS, **(structs or {}))
        with mock.patch.object(native, 'S', native.build(table)), \
                mock.patch.object(native, 'LAYOUT', dict(native.LAYOUT, **(layout or {}))):
            with self.assertRaises(native.AbiError) as caught:
                fresh_load()
        return str(caught.exception)

    def test_a_field_moved(self):
        fields = list(native.STRUCTS['bt_run'])
        fields[0] = ('line', ctypes.c_uint64 * 2)      # every later field moves down
        msg = self.load_with({'bt_run': fields})
        self.assertTrue(msg.startswith('libbtdecode.so: '), msg)
        self.assertIn("struct bt_run field 'cpu' at offset 8 in C, 16 in Python", msg)
        self.assertIn("struct bt_run field 'line' is 8 bytes in C, 16 in Python", msg)
        self.assertIn('struct bt_run is 48 bytes in C, 56 in Python', msg)
        self.assertTrue(msg.endswith('(rebuild with make)'), msg)

    def test_a_field_of_another_size(self):
        fields = [(n, ctypes.c_uint16 if n == 'kind' else t)
                  for n, t in native.STRUCTS['pairing_role']]
        msg = self.load_with({'pairing_role': fields})
        self.assertIn("struct pairing_role field 'kind' is 1 bytes in C, 2 in Python", msg)

    def test_a_missing_field(self):
        fields = native.STRUCTS['bt_json_mark'][:1]
        msg = self.load_with({'bt_json_mark': fields})
        self.assertIn('struct bt_json_mark is 16 bytes in C, 8 in Python', msg)
        self.assertIn("struct bt_json_mark has fields ['at', 'text'] in C, ['at'] in Python", msg)

    def test_a_struct_python_does_not_declare(self):
        table = {k: v for k, v in native.STRUCTS.items() if k != 'bt_dist' and k != 'bt_cpu_stats'}
        with mock.patch.object(native, 'S', native.build(table)):
            with self.assertRaises(native.AbiError) as caught:
                fresh_load()
        self.assertIn('struct bt_dist is in C but not declared in Python', str(caught.exception))

    def test_a_struct_c_does_not_export(self):
        msg = self.load_with({'bt_ghost': [('x', ctypes.c_uint64)]})
        self.assertIn('struct bt_ghost is declared in Python but not in C', msg)

    def test_a_constant(self):
        msg = self.load_with(layout={'BT_JSON_FIELDS': 5})
        self.assertIn('constant BT_JSON_FIELDS is 4 in C, 5 in Python', msg)

    def test_a_constant_c_does_not_export(self):
        with mock.patch.object(native, 'CONSTANTS', native.CONSTANTS + ('BT_NOT_THERE',)):
            with self.assertRaises(native.AbiError) as caught:
                fresh_load()
        self.assertIn('constant BT_NOT_THERE is not in C', str(caught.exception))

    def test_the_real_declarations_load(self):
        self.assertIsNotNone(fresh_load())


class NoFallbackInside(unittest.TestCase):
    """A missing library is reported, not hidden: native.available() is
    False, native.lib() raises; the choice of path is choice.compiled()'s."""

    def test_missing_library(self):
        with mock.patch.object(native, 'LIB_PATH', os.path.join(REPO, 'build', 'no-such.so')), \
                mock.patch.object(native, '_missing', None):
            with mock.patch.object(native, '_lib', None):
                self.assertFalse(native.available())
                with self.assertRaises(OSError):
                    native.lib()

    def test_pure_python_is_decided_once_per_run(self):
        """BT_PURE_PYTHON=1 is read at the first choice.compiled() of a run,
        and the answer holds for the rest of it."""
        from btlib.native import choice
        choice.forget()
        try:
            with mock.patch.dict(os.environ, {choice.DISABLE_ENV: '1'}):
                self.assertFalse(choice.compiled())
                self.assertTrue(native.available())
            self.assertFalse(choice.compiled())
            choice.forget()
            self.assertTrue(choice.compiled())
        finally:
            choice.forget()


if __name__ == '__main__':
    unittest.main()
