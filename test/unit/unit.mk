# One line per host unit test: the kernel sources test/unit/test_X.c links.
# (Pure-logic files only: they must build for the host with -DHOST_BUILD.)
