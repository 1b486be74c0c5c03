/* SHA-256 through OpenSSL's direct interface (SHA256_Init/Update/Final). OpenSSL 3
 * marks it deprecated in favour of EVP, but EVP's first use loads the provider and
 * config machinery: about a third of a short query's instructions. The direct calls
 * run the same SHA-NI code without that. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
