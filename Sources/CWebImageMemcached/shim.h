#include <libmemcached/memcached.h>
