; multiboot2.asm — the header GRUB looks for in the first 32 KiB of the image.
; We ask for nothing optional: GRUB leaves BIOS machines in VGA text mode and
; passes whatever framebuffer it has in the boot information.

MB2_MAGIC        equ 0xE85250D6
MB2_ARCH_I386    equ 0               ; 32-bit protected mode entry
MB2_TAG_END      equ 0

section .multiboot2
align 8
mb2_header:
    dd MB2_MAGIC
    dd MB2_ARCH_I386
    dd mb2_header_end - mb2_header
    dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    ; end tag
    dw MB2_TAG_END
    dw 0
    dd 8
mb2_header_end:
