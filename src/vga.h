/* vga.h — output to an EGA text-mode screen (BIOS boots only: UEFI never
 * leaves the machine in text mode). Does nothing until vga_init(). */
#ifndef VGA_H
#define VGA_H
#include <stdint.h>

void vga_init(uint64_t addr, uint32_t cols, uint32_t rows);
void vga_write(const char *s, unsigned long n);

#endif
