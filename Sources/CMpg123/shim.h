#pragma once
#include <mpg123.h>

// mpg123_param is a macro naming mpg123_param2 (or the old function); Swift imports neither alias.
static inline int cmpg123_param(mpg123_handle *mh, enum mpg123_parms key, long value) {
    return mpg123_param(mh, key, value, 0.0);
}
