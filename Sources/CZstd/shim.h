/* zstd compresses event records with a dictionary trained on the store's own events.
 * ZDICT_trainFromBuffer_fastCover with fixed parameters is in zstd's static-only API:
 * the stable ZDICT_trainFromBuffer searches its parameters and takes 4x longer. The
 * release binary links zstd statically, and Debian's shared library exports it too. */
#define ZDICT_STATIC_LINKING_ONLY 1
/* ZSTD_createDDict_byReference (RecordDecompressor's window) is static-only too. */
#define ZSTD_STATIC_LINKING_ONLY 1
#include <zstd.h>
#include <zdict.h>
