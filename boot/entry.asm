; entry.asm — from GRUB's 32-bit protected mode to the 64-bit C entry.
;
; Multiboot2 machine state (spec 3.3): EAX = 0x36d76289, EBX = physical
; address of the boot information, flat 32-bit segments, paging off,
; interrupts off, no usable stack.
;
; We identity map the first 4 GiB with 2 MiB pages (kernel, low memory,
; ACPI tables, LAPIC/HPET/IOAPIC MMIO all live there), the top GiB
; uncached because that is where MMIO sits, then enable long mode:
; CR4.PAE, CR3, IA32_EFER.LME, CR0.PG (Intel SDM vol. 3 §10.8.5).

%include "layout.inc"

extern kmain
global _start
global boot_pml4
global gdt64_ptr

section .text.boot
bits 32
_start:
    cli
    cld
    mov esp, boot_stack_top
    mov edi, eax                    ; keep the magic and the info pointer
    mov esi, ebx                    ; (EDI, ESI: the SysV argument registers)

    ; Long mode available? CPUID.80000001h:EDX.LM[bit 29]
    mov eax, 0x80000000
    cpuid
    cmp eax, 0x80000001
    jb .no_long_mode
    mov eax, 0x80000001
    cpuid
    test edx, 1 << 29
    jz .no_long_mode

    call build_page_tables

    mov eax, cr4
    or eax, CR4_PAE
    mov cr4, eax
    mov eax, boot_pml4
    mov cr3, eax
    mov ecx, MSR_EFER
    rdmsr
    or eax, EFER_LME
    wrmsr
    mov eax, cr0
    or eax, CR0_PG | CR0_PE
    mov cr0, eax

    lgdt [gdt64_ptr]
    jmp GDT_KCODE:long_mode_entry

.no_long_mode:
    ; Nothing else to do without long mode: say so on COM1 and stop.
    mov esi, no_lm_msg
.putc:
    lodsb
    test al, al
    jz .halt
    mov dx, 0x3F8
    out dx, al
    jmp .putc
.halt:
    hlt
    jmp .halt

; PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 512 2 MiB pages.
build_page_tables:
    mov eax, boot_pdpt
    or eax, PTE_P | PTE_W
    mov [boot_pml4], eax
    mov ecx, 0
.pdpt:
    mov eax, ecx
    shl eax, 12
    add eax, boot_pd
    or eax, PTE_P | PTE_W
    mov [boot_pdpt + ecx * 8], eax
    inc ecx
    cmp ecx, 4
    jb .pdpt
    mov ecx, 0                      ; 2048 entries: 4 GiB / 2 MiB
.pd:
    mov eax, ecx
    shl eax, 21
    or eax, PTE_P | PTE_W | PTE_PS
    cmp ecx, 1536                   ; 3 GiB and up: MMIO, uncached
    jb .cached
    or eax, PTE_PWT | PTE_PCD
.cached:
    mov [boot_pd + ecx * 8], eax
    mov edx, ecx
    shr edx, 11                     ; bits 32+ of the address are 0 below 4 GiB
    mov [boot_pd + ecx * 8 + 4], edx
    inc ecx
    cmp ecx, 2048
    jb .pd
    ret

bits 64
long_mode_entry:
    mov ax, GDT_KDATA
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor ax, ax
    mov fs, ax
    mov gs, ax
    mov rsp, boot_stack_top
    xor rbp, rbp
    ; RDI = magic, RSI = info pointer (zero-extended by the 32-bit moves)
    mov edi, edi
    mov esi, esi
    call kmain
.hang:
    cli
    hlt
    jmp .hang

section .rodata
no_lm_msg: db "baretrace: this CPU has no long mode (x86_64); halting", 13, 10, 0

align 16
gdt64:
    dq 0                            ; null
    dq 0x00AF9A000000FFFF           ; 0x08 64-bit code, DPL 0
    dq 0x00CF92000000FFFF           ; 0x10 data
gdt64_end:
gdt64_ptr:
    dw gdt64_end - gdt64 - 1
    dq gdt64

section .bss
align 4096
boot_pml4:  resb 4096
boot_pdpt:  resb 4096
boot_pd:    resb 4 * 4096
boot_stack: resb BOOT_STACK_SIZE
boot_stack_top:
