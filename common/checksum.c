#include "common/checksum.h"

/* The table entry for byte value b of the reflected polynomial 0xEDB88320. */
static uint32_t crc_entry(uint32_t b)
{
    uint32_t c = b;
    for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    return c;
}

uint32_t checksum_crc32(uint32_t crc, const void *data, size_t len)
{
    /* built per call on the stack (1 KiB, cheap next to the megabytes
     * checksummed), which keeps the module free of global state */
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++)
        table[i] = crc_entry(i);
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}
