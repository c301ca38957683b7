/*
   Fuzz target: the IDX reader (NNDATAIDX), raw and gzip-compressed.

   Input: byte 0 = flags (bit 0: gzip the images file, bit 1: gzip the labels file), bytes 1-2 =
   where the images file ends (little endian, modulo the payload size), then the payload: images
   file bytes followed by labels file bytes. A data set that sets up fills a batch of its first and
   last samples and is viewed.
*/
#define FUZZ_NAME idx
#include "fuzz.h"

/* CRC-32 (IEEE), for the gzip trailer */
static uint32_t FuzzCRC32(const uint8_t *p, size_t n)
{
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return c ^ 0xFFFFFFFFu;
}

/* writes data as a gzip file of stored (uncompressed) deflate blocks, or raw; 0 on success. Written
   by hand so that the target needs no zlib of its own: the reader's zlib still inflates it. */
static int FuzzWriteMaybeGz(const char path[], const uint8_t *data, size_t size, int gz)
{
  static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  FILE                *f;
  uint32_t             crc = FuzzCRC32(data, size), isize = (uint32_t)size;
  uint8_t              tail[8];
  size_t               off = 0;
  int                  bad = 0;

  if (!gz) return FuzzWriteFile(path, data, size);
  f = fopen(path, "wb");
  if (!f) return 1;
  bad |= fwrite(head, 1, sizeof(head), f) != sizeof(head);
  do {
    size_t  n     = size - off > 65535 ? 65535 : size - off;
    uint8_t bh[5] = {(uint8_t)(off + n == size), (uint8_t)(n & 0xff), (uint8_t)(n >> 8), (uint8_t)(~n & 0xff), (uint8_t)((~n >> 8) & 0xff)};
    bad |= fwrite(bh, 1, 5, f) != 5;
    if (n) bad |= fwrite(data + off, 1, n, f) != n;
    off += n;
  } while (off < size);
  for (int i = 0; i < 4; i++) {
    tail[i]     = (uint8_t)(crc >> (8 * i));
    tail[4 + i] = (uint8_t)(isize >> (8 * i));
  }
  bad |= fwrite(tail, 1, 8, f) != 8;
  return (fclose(f) != 0) | bad;
}

static int FuzzOne_idx(const uint8_t *data, size_t size)
{
  char   images[PETSC_MAX_PATH_LEN], labels[PETSC_MAX_PATH_LEN];
  size_t split, n;

  if (size < 3) return 0;
  n     = size - 3;
  split = n ? (size_t)(data[1] | (data[2] << 8)) % (n + 1) : 0;
  FuzzTempName(images, sizeof(images), "images.idx");
  FuzzTempName(labels, sizeof(labels), "labels.idx");
  if (FuzzWriteMaybeGz(images, data + 3, split, data[0] & 1) || FuzzWriteMaybeGz(labels, data + 3 + split, n - split, data[0] & 2)) return 0;
  FuzzBegin();
  (void)PetscOptionsSetValue(NULL, "-fz_data_images", images);
  (void)PetscOptionsSetValue(NULL, "-fz_data_labels", labels);
  FuzzDataSet("idx");
  FuzzEnd();
  unlink(images);
  unlink(labels);
  return 0;
}
