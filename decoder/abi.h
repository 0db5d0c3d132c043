/* abi.h — what libbtdecode.so says about itself: the size and every
 * field's offset and size of each struct its functions take, and the
 * constants the Python side needs, so that scripts/btlib/native.py can
 * check its ctypes declarations against the library it loaded (a stale
 * build names the struct and the field instead of corrupting memory). */
#ifndef DECODER_ABI_H
#define DECODER_ABI_H
#include <stddef.h>
#include <stdint.h>

struct bt_abi_field {
    const char *name;
    uint64_t offset, size;
};

struct bt_abi_struct {
    const char *name;                       /* the C tag: "bt_run" */
    uint64_t size, nfields;
    const struct bt_abi_field *fields;      /* in declaration order */
};

struct bt_abi_const {
    const char *name;                       /* the C name: "BT_CSV_ARGS_MAX" */
    int64_t value;
};

/* The tables and their lengths (*n). Not listed: these three structs,
 * which must be read before anything can be checked. */
const struct bt_abi_struct *bt_abi_structs(size_t *n);
const struct bt_abi_const *bt_abi_constants(size_t *n);

#endif
