/* test_pat.c — the PAT value and page bits for write combining (arch/pat.h). */
#include "arch/pat.h"
#include "check.h"

int main(void)
{
    /* The power-on value, entry 1 (WT, 04) made WC (01); the rest kept. */
    CHECK_EQ(pat_with_wc(PAT_POWER_ON), 0x0007040600070106ull);
    CHECK_EQ(pat_with_wc(pat_with_wc(PAT_POWER_ON)), 0x0007040600070106ull);
    CHECK_EQ(pat_with_wc(0xFFFFFFFFFFFFFFFFull), 0xFFFFFFFFFFFFF9FFull);
    /* Entry i = PAT*4 + PCD*2 + PWT (SDM table 12-11), for a 2 MiB page. */
    CHECK_EQ(pat_pde_bits(0), 0);
    CHECK_EQ(pat_pde_bits(PAT_ENTRY_WC), PAT_PTE_PWT);              /* WC: PWT alone */
    CHECK_EQ(pat_pde_bits(3), PAT_PTE_PWT | PAT_PTE_PCD);           /* UC: registers */
    CHECK_EQ(pat_pde_bits(4), PAT_PDE_PAT);
    CHECK_EQ(pat_pde_bits(7), PAT_PDE_PAT | PAT_PTE_PCD | PAT_PTE_PWT);
    CHECK_EQ(PAT_PTE_PWT, 1u << 3);
    CHECK_EQ(PAT_PTE_PCD, 1u << 4);
    CHECK_EQ(PAT_PDE_PAT, 1u << 12);
    return check_summary("test_pat");
}
