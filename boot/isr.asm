; isr.asm — one entry stub per interrupt vector, all funnelled into
; interrupt_dispatch(struct int_frame *). Vectors that push a CPU error
; code (8, 10-14, 17, 21, 29, 30) keep it; the others push 0 so every
; frame has the same layout (src/arch/idt.h: struct int_frame).

extern interrupt_dispatch
global isr_table

%macro STUB 1
isr_%1:
%if (%1 == 8) || (%1 >= 10 && %1 <= 14) || (%1 == 17) || (%1 == 21) || (%1 == 29) || (%1 == 30)
%else
    push 0
%endif
    push %1
    jmp isr_common
%endmacro

section .text
bits 64
isr_common:
    push rax
    push rbx
    push rcx
    push rdx
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    cld
    mov rdi, rsp
    mov rbx, rsp                        ; align the stack for C
    and rsp, -16
    call interrupt_dispatch
    mov rsp, rbx
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    add rsp, 16                         ; vector and error code
    iretq

%assign v 0
%rep 256
STUB v
%assign v v + 1
%endrep

section .rodata
align 8
isr_table:
%assign v 0
%rep 256
    dq isr_ %+ v
%assign v v + 1
%endrep
