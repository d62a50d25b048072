/* lib/verify/verify_kern.c: the portable element loop of posenc_verify_row_check and the choice
 * of path (see verify_kern.h). */
#include "posenc/cpu.h"
#include "lib/core/cpu_internal.h"
#include "lib/verify/verify_kern.h"

double pe_vrow_check_c(const pe_vrow_job *j, posenc_verify_row_result *o)
{
    double rowmax = 0;
    for (int k = 0; k < j->hd; k++)
        pe_vrow_scan1(j, o, k, &rowmax);
    double base = j->extra * rowmax;
    for (int i = 0; i < j->n; i++)
        pe_vrow_pair(j, base, i, o);
    return rowmax;
}

double pe_vrow_check(const pe_vrow_job *j, posenc_verify_row_result *o)
{
    switch (posenc_cpu_active()) {
#if PE_CPU_X86
    case POSENC_CPU_AVX2:
    case POSENC_CPU_AVX512: /* four doubles a vector serve both */
        return pe_vrow_check_avx2(j, o);
#endif
    default:
        return pe_vrow_check_c(j, o);
    }
}
