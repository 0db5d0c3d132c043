/* exception.h — CPU exception reporting. A fault prints the CPU, the
 * vector's name, error code, RIP, CR2 and all registers on the console,
 * records an EXCEPTION trace event, then parks that CPU (the others go
 * on). An NMI returns at once. */
#ifndef EXCEPTION_H
#define EXCEPTION_H
#include <stdint.h>
#include "idt.h"

#define EXC_NMI           2
#define EXC_DOUBLE_FAULT  8
#define EXC_PAGE_FAULT    14
#define EXC_MACHINE_CHECK 18

void exception_handle(struct int_frame *f);

#endif
