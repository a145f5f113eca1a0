/*
 * Checksums shared by the layers of Quicksilver.
 *
 * CRC-32C (the Castagnoli polynomial, as used by iSCSI, ext4 and SCTP) is the
 * checksum the RPC layer puts on headers and payloads. It is computed in
 * software, eight bytes per step, so that every fabric and every host gives
 * the same value without depending on CPU features.
 */
#ifndef QS_CHECKSUM_H
#define QS_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Extend the CRC-32C `crc` over `len` bytes at `buf` and return the new value.
 * Start with crc = 0; the pre- and post-inversion of the standard algorithm
 * happen inside, so calls chain: qs_crc32c(qs_crc32c(0, a, n), b, m) equals
 * the CRC of a followed by b. The check value of "123456789" is 0xE3069283.
 * `buf` may be NULL only when `len` is 0. Thread-safe.
 */
uint32_t qs_crc32c(uint32_t crc, const void *buf, size_t len);

#endif /* QS_CHECKSUM_H */
