; ap_entry.asm — an application processor's first 64-bit kernel code.
;
; APs arrive here in parallel, in any order, with no stack. Each takes a
; unique ticket with a locked XADD; the ticket selects its boot stack among
; the ap_stack_count stacks of AP_STACK_SIZE bytes at ap_stack_base, which
; smp.c takes from the memory map before it sends any IPI (as many as APs
; are started). (The ticket is not the CPU index: ap_main() finds that
; from its APIC ID.)

%include "layout.inc"

extern ap_main
extern gdt64_ptr
global ap_long_entry
global ap_ticket
global ap_stack_base
global ap_stack_count

section .text
bits 64
ap_long_entry:
    mov eax, 1
    lock xadd [rel ap_ticket], eax
    cmp eax, [rel ap_stack_count]
    jae .surplus                        ; more arrivals than stacks: park
    inc eax
    imul rax, rax, AP_STACK_SIZE
    mov rsp, [rel ap_stack_base]
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
ap_stack_count: dd 0
align 8
ap_stack_base: dq 0
