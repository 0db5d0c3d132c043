/* inputpoll.c — the installed key reader (inputpoll.h). */
#include "dev/inputpoll.h"
#include <stddef.h>

static void (*reader)(void);

void inputpoll_set(void (*poll)(void)) { reader = poll; }

void inputpoll_run(void)
{
    if (reader)
        reader();
}
