/* cpu_ops in float and double: one implementation, two instantiations. */
#include "trainer/cpu_ops.h"

#include <math.h>
#include <stddef.h>

#define T float
#define S _f32
#include "trainer/cpu_ops_impl.inc"
#undef T
#undef S

#define T double
#define S _f64
#include "trainer/cpu_ops_impl.inc"
#undef T
#undef S
