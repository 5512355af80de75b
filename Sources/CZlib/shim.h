#include <zlib.h>

/// `inflateInit2(stream, -MAX_WBITS)`: a raw deflate stream, as a zip entry holds it (no zlib
/// header or trailer). zlib's init calls are macros that pass its version and struct size, which
/// Swift cannot import, hence this wrapper.
static inline int healthgate_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -MAX_WBITS);
}
