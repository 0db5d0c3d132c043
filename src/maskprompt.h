/* maskprompt.h — the `m` hotkey: change the traced categories at run time.
 *
 *     m           prints "mask> " with the current categories
 *     irq,boot⏎   sets exactly those categories (names from events.def,
 *                 or "all" / "none"); an unknown name changes nothing
 *     Esc         cancels; so does 30 s without a key
 *
 * While the prompt is open every input byte goes to it (Backspace/DEL
 * edit, bytes that cannot be in a name are ignored). Tracing on/off is
 * the `t` key's business: the prompt only touches category bits. */
#ifndef MASKPROMPT_H
#define MASKPROMPT_H
#include <stdbool.h>

void maskprompt_open(void);
bool maskprompt_active(void);
void maskprompt_byte(int c);         /* one input byte while active */
void maskprompt_tick(void);          /* called on every poll: the timeout */

#endif
