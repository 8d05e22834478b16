/* checksum: CRC-32 (IEEE 802.3, the zlib/PNG polynomial), computed in
 * pieces, for checkpoint files and anything else that must notice damage.
 */
#ifndef SCALEPLAN_COMMON_CHECKSUM_H
#define SCALEPLAN_COMMON_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over len more bytes; start with crc = 0. */
uint32_t checksum_crc32(uint32_t crc, const void *data, size_t len);

#endif
