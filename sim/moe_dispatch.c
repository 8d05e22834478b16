#include "sim/moe_dispatch.h"

double moe_dispatch_local_sort_bytes(moe_dispatch_t d, int ep, int etp, double local_experts,
                                     double received_bytes)
{
    if (d != MOE_DISPATCH_ALLTOALL || ep * (etp > 0 ? etp : 1) <= 1 || !(local_experts > 1) ||
        !(received_bytes > 0))
        return 0;
    return 2 * received_bytes; /* read every copy, write it in expert order */
}

double moe_dispatch_elem_bytes(moe_dispatch_t d, bool fp8_dispatch, bool quantized,
                               double act_bytes)
{
    if (d == MOE_DISPATCH_DEEPEP && fp8_dispatch && quantized)
        return 1 + 4.0 / 128; /* e4m3 values, one fp32 scale per 128 */
    return act_bytes;
}
