/* pic.h — the legacy 8259 interrupt controllers, which we never use. */
#ifndef DEV_PIC_H
#define DEV_PIC_H

/* Move the PICs' vectors off the CPU exception range (to 0x20-0x2F) and
 * mask every line, so a stray IRQ cannot look like a fault. */
void pic_disable(void);

#endif
