#include <jxl/decode.h>
#include <jxl/encode.h>
#include <jxl/butteraugli.h>
