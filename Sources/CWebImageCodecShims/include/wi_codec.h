#ifndef WI_CODEC_H
#define WI_CODEC_H
// Every setjmp/longjmp of the codecs lives behind these functions: libjpeg's and libpng's error exits
// longjmp back into C here, and Swift sees a status code plus a message.
#include <stddef.h>
#include <stdint.h>

/// Status codes returned by every `wi_` codec function.
typedef enum wi_status {
    WI_OK = 0,
    WI_ERROR = 1,      ///< the library reported a fatal error; the message says which
    WI_NEED_DATA = 2,  ///< more input is needed (incremental decoding)
    WI_NO_MEMORY = 3,
} wi_status;

/// Size of the message buffer callers pass in (libjpeg's JMSG_LENGTH_MAX is 200).
#define WI_MESSAGE_MAX 256

#endif
