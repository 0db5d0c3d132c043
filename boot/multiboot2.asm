; multiboot2.asm — the header GRUB looks for in the first 32 KiB of the image.
; One optional request: a framebuffer (Multiboot2 spec 3.1.10), on which the
; kernel draws its own text (src/console/screen.c). Without it GRUB on BIOS always
; leaves EGA text mode. GRUB's multiboot2 command turns the preferred size
; into gfxpayload="1024x768x32,1024x768,auto" (the first mode the card or
; the UEFI GOP has); an entry that sets gfxpayload after that command
; overrides it (iso/grub.cfg's text-only entry: gfxpayload=text).
; 1024x768: every VBE card and GOP has it, and 8x16 cells stay legible.

MB2_MAGIC        equ 0xE85250D6
MB2_ARCH_I386    equ 0               ; 32-bit protected mode entry
MB2_TAG_END      equ 0
MB2_TAG_FB       equ 5               ; framebuffer request
MB2_TAG_OPTIONAL equ 1               ; boot anyway if GRUB cannot

section .multiboot2
align 8
mb2_header:
    dd MB2_MAGIC
    dd MB2_ARCH_I386
    dd mb2_header_end - mb2_header
    dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    ; framebuffer tag: preferred width, height, bits per pixel
    dw MB2_TAG_FB
    dw MB2_TAG_OPTIONAL
    dd 20
    dd 1024, 768, 32
    align 8, db 0
    ; end tag
    dw MB2_TAG_END
    dw 0
    dd 8
mb2_header_end:
