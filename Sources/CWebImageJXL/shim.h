#include <jxl/decode.h>
#include <jxl/butteraugli.h>
