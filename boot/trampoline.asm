; trampoline.asm — where an application processor starts after STARTUP IPI.
;
; The BSP copies this blob to a free 4 KiB page below 1 MiB and sends a
; SIPI whose vector is page >> 12, so the AP starts in real mode at
; CS:IP = (page >> 4):0. The code is position independent: every absolute
; address it needs (its GDT, the far-jump targets, CR3, the kernel entry)
; is patched into the copy by the BSP (smp.c) before the first SIPI.
; No stack is used, so any number of APs may run this at once.
;
; Real mode -> protected mode (CR0.PE) -> long mode (CR4.PAE, CR3,
; EFER.LME, CR0.PG), then a jump to ap_long_entry in the kernel image.

%include "layout.inc"

global tramp_gdt, tramp_gdtr, tramp_pm32_jmp, tramp_lm64_jmp, tramp_cr3, tramp_entry64
global tramp_pm32, tramp_lm64, tramp_start, tramp_end

section .trampoline
bits 16
tramp_start:
    cli
    cld
    mov ax, cs
    mov ds, ax
    xor ebx, ebx
    mov bx, ax
    shl ebx, 4                          ; EBX = physical base of this copy
    o32 lgdt [tramp_gdtr - tramp_start]
    mov eax, cr0
    or eax, CR0_PE
    mov cr0, eax
tramp_pm32_jmp:                         ; jmp dword 0x08:(base + pm32)
    db 0x66, 0xEA
    dd 0                                ; patched
    dw 0x08

bits 32
pm32:
tramp_pm32:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov eax, cr4
    or eax, CR4_PAE
    mov cr4, eax
    mov eax, [ebx + tramp_cr3 - tramp_start]
    mov cr3, eax
    mov ecx, MSR_EFER
    rdmsr
    or eax, EFER_LME
    wrmsr
    mov eax, cr0
    or eax, CR0_PG
    mov cr0, eax
tramp_lm64_jmp:                         ; jmp 0x18:(base + lm64)
    db 0xEA
    dd 0                                ; patched
    dw 0x18

bits 64
lm64:
tramp_lm64:
    mov ebx, ebx                        ; upper halves are undefined after the switch
    mov rax, [rbx + tramp_entry64 - tramp_start]
    jmp rax

align 16
tramp_gdt:
    dq 0
    dq 0x00CF9A000000FFFF               ; 0x08 32-bit code
    dq 0x00CF92000000FFFF               ; 0x10 data
    dq 0x00AF9A000000FFFF               ; 0x18 64-bit code
tramp_gdt_end:
tramp_gdtr:
    dw tramp_gdt_end - tramp_gdt - 1
    dd 0                                ; patched: base + tramp_gdt
align 8
tramp_cr3:      dq 0                    ; patched
tramp_entry64:  dq 0                    ; patched: ap_long_entry
tramp_end:
