#include "wi_codec.h"
#include <stdlib.h>

void wi_free(void *pointer) { free(pointer); }
