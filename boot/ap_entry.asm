; ap_entry.asm — an application processor's first 64-bit kernel code.
;
; APs arrive here in parallel, in any order, with no stack. Each takes a
; unique ticket with a locked XADD; the ticket selects its boot stack.
; (The ticket is not the CPU index: ap_main() finds that from its APIC ID.)

%include "layout.inc"

extern ap_main
extern gdt64_ptr
global ap_long_entry
global ap_ticket

AP_STACK_SIZE equ 16384

section .text
bits 64
ap_long_entry:
    mov eax, 1
    lock xadd [rel ap_ticket], eax
    cmp eax, MAX_CPUS
    jae .surplus                        ; more arrivals than stacks: park
    inc eax
    imul rax, rax, AP_STACK_SIZE
    lea rsp, [rel ap_stacks]
    add rsp, rax                        ; top of stack number `ticket`
    lgdt [rel gdt64_ptr]
    push GDT_KCODE
    lea rax, [rel .reload_cs]
    push rax
    retfq
.reload_cs:
    mov ax, GDT_KDATA
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor rbp, rbp
    call ap_main
.surplus:
    cli
    hlt
    jmp .surplus

section .data
align 8
ap_ticket: dd 0

section .bss
align 4096
ap_stacks: resb AP_STACK_SIZE * MAX_CPUS
