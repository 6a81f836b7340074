#include "wi_codec.h"
